"""Models: non-negative matrix factorisation (HALS) for the server's V and each entity's U."""
