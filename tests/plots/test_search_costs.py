import dataclasses

from nca_core.plots import search_costs


def test_search_cost_chart_groups_index_kinds_and_labels_ratios_to_the_first():
    from nca_core.search.costs import SearchCost

    costs = [
        SearchCost("raw 64-D", 64, 0.02, 0.8, 3_000_000),
        SearchCost("raw 64-D", 64, 0.021, 0.2, 4_000_000, "hnsw", 1.5),
        SearchCost("NCA 8-D", 8, 0.03, 0.1, 375_000),
        SearchCost("NCA 8-D", 8, 0.03, 0.05, 1_500_000, "hnsw", 0.5),
    ]
    fig = search_costs.search_cost_chart(costs)
    assert [a.text for a in fig.layout.annotations] == ["query time (s)", "index size (MB)", "test error (%)"]
    assert len(fig.data) == 6 and fig.layout.barmode == "group"
    exact_time, exact_size, exact_error, hnsw_time, hnsw_size, _ = fig.data
    assert [t.name for t in fig.data if t.showlegend] == ["exact", "HNSW graph"]
    assert list(exact_time.x) == list(hnsw_time.x) == ["raw 64-D", "NCA 8-D"]
    assert list(exact_time.y) == [0.8, 0.1] and list(exact_time.hovertext) == ["reference", "8.0x faster"]
    assert list(hnsw_time.hovertext) == ["4.0x faster", "16.0x faster"]
    assert list(hnsw_size.hovertext) == ["1.3x larger", "2.0x smaller"]  # 4 MB and 1.5 MB against 3 MB
    assert list(exact_size.y) == [3.0, 0.375] and list(exact_error.text) == ["2.00%", "3.00%"]
    assert exact_time.text is None and exact_size.text is None
    assert (exact_time.xaxis, exact_size.xaxis, exact_error.xaxis) == ("x", "x2", "x3")
    assert exact_error.textposition == "inside" and fig.layout.uniformtext.mode == "hide"  # never two in one
    assert exact_time.hovertemplate == "%{x}: %{y:.3g} s<br>%{hovertext}"
    assert exact_error.hovertemplate == "%{x}: %{y:.2f}%"


def test_search_cost_chart_draws_no_bars_of_timer_noise():
    """Times under the noise level are not compared: a pair of them says "too quick" on
    hover, and where every time is, the time panel says so instead of drawing bars."""
    from nca_core.search.costs import SearchCost

    mixed = [
        SearchCost("raw 64-D", 64, 0.02, 0.04, 3_000_000),
        SearchCost("raw 64-D", 64, 0.02, 0.2, 4_000_000, "hnsw", 1.5),
        SearchCost("NCA 8-D", 8, 0.03, 0.01, 375_000),
        SearchCost("NCA 8-D", 8, 0.03, 0.3, 1_500_000, "hnsw", 0.5),
    ]
    fig = search_costs.search_cost_chart(mixed, noise_seconds=0.05)
    assert fig.data[0].xaxis == "x" and list(fig.data[0].hovertext) == ["reference", "too quick"]
    quick = [dataclasses.replace(c, query_seconds=c.query_seconds / 100) for c in mixed]  # all under 5 ms
    fig = search_costs.search_cost_chart(quick, noise_seconds=0.05)
    assert {t.xaxis for t in fig.data} == {"x2", "x3"}  # sizes and errors only
    assert [t.name for t in fig.data if t.showlegend] == ["exact", "HNSW graph"]
    assert any("50 ms: too quick" in a.text for a in fig.layout.annotations)
    assert fig.layout.xaxis.visible is False and fig.layout.yaxis.visible is False


def test_search_cost_panel_titles_sit_below_the_toolbar_band():
    """Titles are drawn in the top margin, just above the panels; the toolbar that appears
    on hover covered the right-hand one ("test error") on a 1024-pixel screen."""
    from nca_core.search.costs import SearchCost

    fig = search_costs.search_cost_chart([SearchCost("raw 64-D", 64, 0.02, 0.8, 3_000_000)])
    tallest = max(a.font.size for a in fig.layout.annotations)
    assert fig.layout.margin.t - search_costs.TOOLBAR_BAND >= tallest
