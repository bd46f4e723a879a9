"""Figure builders, pure functions of results: Plotly figures, Vega-Lite live charts,
replay GIFs and image thumbnails."""
