"""Empirical privacy audits: what an observer of the server's inbox could learn about one user.

:mod:`.membership` — the membership-inference audit: the attacks, one audit, the grid, its summary;
:mod:`.lower_bounds` — its statistics: Clopper–Pearson ε lower bounds and the ROC;
:mod:`.targets` — the audited users and the neighbouring datasets without and with each;
:mod:`.defaults` — its default grid, targets and attacks (light: the CLI parser reads them);
:mod:`.cost` — its expected time, timed before it runs on synthetic data of the entity's shape.
"""
