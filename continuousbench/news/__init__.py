"""Track II, NEWS: a post-cutoff news corpus with questions whose support is verified article by article.

One stage a module, each a command that reads a folder of shards and writes one (paper App. H):

``extract`` (WARC -> articles) -> ``dedup`` (exact + MinHash containment) -> ``subsample`` ->
``cluster`` (events: windowed mutual kNN + Leiden) -> ``facts`` -> ``qa`` (verbatim answers) ->
``filter`` (closed-book, ambiguity) -> ``support`` (open-book, per article) -> ``build`` (the release).

Importing this package imports nothing heavy; each stage imports its libraries when it runs.
"""
