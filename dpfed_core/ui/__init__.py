"""The dashboard's shared code: :mod:`.engine` (pure functions the pages call, no Streamlit) and
:mod:`.widgets` (session state, cached computations, sidebar)."""
