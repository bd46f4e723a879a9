"""The vocabulary of a run: the names of every choice, the rules that tie settings to each
other and to the data (``rules``), and each setting's one declaration (``settings``).
Loads neither torch nor scikit-learn, so reading a link or a flag is instant."""
