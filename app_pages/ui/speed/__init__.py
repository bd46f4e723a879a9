"""The kNN speed page's parts: the searches measured once per machine, and the table that shows them."""
