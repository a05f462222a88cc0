"""`import biasatlas` shows its public API and nothing else."""

from __future__ import annotations

import biasatlas


def test_dir_lists_the_public_api_only() -> None:
    names = dir(biasatlas)
    assert names == sorted(biasatlas.__all__)
    assert not {"Any", "TYPE_CHECKING", "annotations", "_LAZY"} & set(names)
    for name in names:
        assert getattr(biasatlas, name) is not None  # every listed name resolves (the lazy ones on first use)


def test_no_module_exports_a_private_name() -> None:
    """Every ``__all__`` in the package names public objects only (dunders like ``__version__`` aside), and
    each name it lists exists in its module."""
    import ast
    import importlib
    from pathlib import Path

    import biasatlas

    root = Path(biasatlas.__file__).parent
    bad: list[str] = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                    for t in node.targets):
                names = ast.literal_eval(node.value)
                parts = path.relative_to(root.parent).with_suffix("").parts
                module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
                loaded = importlib.import_module(module)
                for name in names:
                    if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
                        bad.append(f"{module}: {name} (private)")
                    elif not hasattr(loaded, name):
                        bad.append(f"{module}: {name} (missing)")
    assert bad == []
