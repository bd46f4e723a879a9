"""The Compare page's parts: the projections fitted and scored, and the panels that draw them."""
