"""The Train page's parts: the session's runs, its sidebar and buttons, what it shows live and after a run."""
