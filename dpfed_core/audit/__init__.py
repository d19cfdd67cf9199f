"""Empirical privacy audits: what an observer of the server's inbox could learn about one user.

:mod:`.membership` — the membership-inference audit with Clopper–Pearson ε lower bounds;
:mod:`.defaults` — its default grid, targets and attacks (light: the CLI parser reads them).
"""
