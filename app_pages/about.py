"""How NCA works: the toy to click first, then the idea and the paper's formulas."""

import streamlit as st

from app_pages.ui import app_data, lesson, links, navigation
from app_pages.ui.toy import toy_problem
from nca_core.plots import colours, figures
from nca_core.runs.toy import neighbourhood

CONTROLS = ("about-scale", "about-anchor")  # the toy's settings, kept in the page's address
names = app_data.dataset_names()
links.follow_address(navigation.ABOUT.url_path, names, CONTROLS)  # Back brings a scale and point back
links.read_once(names)
st.title("How NCA works")
# A formula's box scrolled by a pixel, a scrolling region that a keyboard cannot reach
st.html("<style>.katex-display { overflow: visible !important; }</style>")
st.caption(
    "NCA learns a map under which each point's nearest neighbours share its class. Click a point "
    "below to see whom it listens to, before and after; the idea and the paper's formulas follow."
)

st.header("Who does a point listen to?")
same, other = colours.SAME_CLASS_LINE[1], colours.OTHER_CLASS_LINE[1]
st.caption(
    "A toy set with three classes side by side and a noisy vertical axis. Click a point: lines "
    f"show its p_ij to the others (thicker = likelier; {same} = same class, {other} = another; "
    "lines are black or grey, never a class colour; each class has a shape of its own as well as a "
    "colour). Left, the identity map; right, the map NCA "
    "learnt. The slider scales A."
)
problem = toy_problem()
from_link = links.take("toy_scale", "toy_point")
if from_link.get("toy_point", 0) >= len(problem.y):
    links.notice(
        f"point={from_link.pop('toy_point')} ignored: the toy set's points are numbered 0 to {len(problem.y) - 1}"
    )
scale = st.slider(
    "Scale of A", 0.1, 5.0, links.first_default("about-scale", from_link.get("toy_scale", 1.0)), 0.1,
    key="about-scale", help="A larger map makes distances larger, so p_ij concentrates on the nearest few points.",
)  # fmt: skip
anchor = st.session_state.setdefault("about-anchor", from_link.get("toy_point", 0))
links.used("toy_scale", "toy_point")
links.show_notices()
links.write_address(navigation.ABOUT.url_path, {"a_scale": f"{scale:g}", "point": str(anchor)})
scaled = "" if scale == 1 else f"{scale:g} × "
panels = (
    ("before", f"before: A = {scaled}identity", problem.initial),
    ("after", "after: A learnt by NCA" + (f", × {scale:g}" if scale != 1 else ""), problem.learned),
)
for column, (key, label, A) in zip(st.columns(2), panels):
    with column:
        st.markdown(f"**{label}**")  # above the figure, clear of its legend
        view = neighbourhood(problem.X, problem.y, A, anchor, scale)
        fig = figures.neighbour_links(view.Z, problem.y, problem.classes, anchor, view.p, uirevision=key)
        event = st.plotly_chart(fig, key=f"about-{key}", on_select="rerun", selection_mode=("points",))
        picked = [pt.get("customdata") for pt in getattr(getattr(event, "selection", None), "points", [])]
        picked = [int(c) for c in picked if c is not None]
        if picked and picked[0] != anchor:
            st.session_state["about-anchor"] = picked[0]
            st.rerun()
        c1, c2 = st.columns(2)
        c1.metric("p_i (same class)", f"{view.p_correct:.3f}")
        c2.metric(
            "neighbours",
            f"{view.effective_neighbours:.1f}",
            help="The effective number of neighbours, exp(entropy of p_i·): how many points it listens to.",
        )

st.header("The idea, and the paper's formulas")
st.markdown(
    """
A k-nearest-neighbour classifier is only as good as its notion of distance. NCA
(Goldberger, Roweis, Hinton and Salakhutdinov, 2004) *learns* the distance: it finds a
linear map $A$ so that, in the space $z = Ax$, a point's neighbours tend to share its class.
With $A$ of shape $d \\times D$ and a small $d$, the same map gives a picture of the data
and a kNN index that is many times smaller and faster.

Instead of a hard nearest neighbour, every point $i$ picks a neighbour $j$ at random,
closer points being likelier:
"""
)
st.latex(
    r"p_{ij} = \frac{\exp(-\lVert Ax_i - Ax_j\rVert^2)}{\sum_{k \neq i} \exp(-\lVert Ax_i - Ax_k\rVert^2)}, \qquad p_{ii} = 0"
)
st.markdown("The chance that $i$ is classified correctly is the mass on its own class $C_i$:")
st.latex(r"p_i = \sum_{j \in C_i} p_{ij}")
st.markdown("NCA maximises the expected number of correct classifications, or its log-likelihood version:")
st.latex(r"f(A) = \sum_i p_i \qquad\qquad g(A) = \sum_i \log p_i")
st.markdown(
    """
Both are smooth in $A$, so gradient methods apply. The scale of $A$ matters too: a large
map makes $p_{ij}$ peak on the single nearest neighbour, a small one spreads it over many,
so NCA also learns how many neighbours to listen to.
"""
)
lesson.show_next_step("about")
