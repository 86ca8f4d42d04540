"""`make bench`: how long the site takes to build, and why, in one table.

Not a test: nothing here asserts on a time. Targets are printed beside the figures with
whether they are met. Run it as `python -m bench` (see `bench/__main__.py` for what is
measured and how).
"""
