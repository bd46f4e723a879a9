"""How NCA works: the idea and the paper's formulas."""

import streamlit as st

st.title("How NCA works")
st.caption("The idea behind Neighbourhood Components Analysis in a few lines, with the paper's formulas.")

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
