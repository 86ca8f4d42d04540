"""Publishing the measurements: cache, numbers and formats, pages, tables, charts, the
numbers lock and the drift gate. Plain library code: MkDocs' hooks (hooks/) and the
command line (`python -m model check`) both call it, so the gate holds without MkDocs.
"""
