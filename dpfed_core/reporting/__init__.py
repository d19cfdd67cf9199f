"""Reporting: the self-contained HTML compliance report and the plotly figures it shares with the UI."""
