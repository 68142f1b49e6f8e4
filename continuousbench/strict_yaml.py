"""The one strict YAML reading of recipes and study files: YAML keeps the last of a key given twice, we refuse
it, and a file that is not YAML is one line naming where it came from."""

from __future__ import annotations

from typing import Any

from continuousbench.errors import UserError


class _DuplicateKey(Exception):
    pass


def _unique_key_loader():
    """``yaml.SafeLoader`` that refuses a key given twice in one mapping (YAML keeps the last silently)."""
    import yaml

    class Loader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            keys = [self.construct_object(k, deep=deep) for k, _ in node.value]
            twice = next((k for i, k in enumerate(keys) if k in keys[:i]), None)
            if twice is not None:
                raise _DuplicateKey(twice)
            return super().construct_mapping(node, deep=deep)

    return Loader


def load_yaml(text: str, source: str) -> Any:
    """The one strict YAML reading of a recipe or study file: a key given twice in one mapping, or text
    that is not YAML, is one line naming ``source`` (e.g. ``--config r.yaml``)."""
    import yaml

    try:
        return yaml.load(text, Loader=_unique_key_loader())
    except _DuplicateKey as err:
        raise UserError(f"{source} sets {err} twice; keep one of them") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise UserError(f"{source} is not valid YAML{where}; fix the file") from None
