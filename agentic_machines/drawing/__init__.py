"""The drawing layer: state-transition diagrams (matplotlib, DOT, Mermaid, JSON), notebook
display and the gallery of the docs' pictures.

See ``docs/design.md`` for the layers.
"""
