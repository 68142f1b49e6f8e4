"""Build a NEWS release (articles, QA, verified support counts) from CC-News WARC files.

Usage:
    python builders/news.py --config builders/configs/news-small.yaml --warc 'cc-news/*.warc.gz' \
        --llm endpoint:http://localhost:8000/v1#google/gemma-3-27b-it
    python builders/news.py --config builders/configs/news-tiny.yaml --articles articles.jsonl

Same dataclasses, parser and ``main`` as ``continuousbench build news`` (defaults < YAML < command line;
unknown keys are an error).
"""

from continuousbench.news.build import NewsBuildArguments, cli, main, make_parser  # noqa: F401

if __name__ == "__main__":
    cli()
