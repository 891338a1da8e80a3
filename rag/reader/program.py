"""Computation as a tool: a tiny program over values read off a page, run by an AST whitelist.

The model writes an expression over the numbers it copied (`a = 31; b = 20; ans = a - b`), or code writes
the program of a count or a comparison; either way the program is shown, and nothing in it reaches `eval`
or `exec`: it is parsed with `ast` and interpreted node by node. Allowed: number and string literals,
lists, tuples, names bound by the program, arithmetic, round/abs/min/max/sum/len/float/int and
subscripts. No attributes, imports, loops or function definitions, no dunder anywhere; powers and sizes
are bounded (with no loop, a program of 2,000 characters ends at once).
"""

from __future__ import annotations

import ast
import math
import operator
from typing import Any

MAX_SOURCE_CHARS = 2000
MAX_EXPONENT = 64
MAX_MAGNITUDE = 1e15
MAX_ITEMS = 10_000

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}
FUNCTIONS = {"round": round, "abs": abs, "min": min, "max": max, "sum": sum, "len": len,
             "float": float, "int": int}


class ComputeError(ValueError):
    """The program is not allowed, or failed; the message says why, for the model's retry."""


def run_program(source: str, names: dict[str, Any] | None = None) -> Any:
    """Run a program; its result is `ans` if it sets one, else its last expression or assignment."""
    if len(source) > MAX_SOURCE_CHARS:
        raise ComputeError(f"program too long ({len(source)} characters)")
    try:
        tree = ast.parse(source.strip(), mode="exec")
    except SyntaxError as exc:
        raise ComputeError(f"syntax error: {exc.msg} (line {exc.lineno})") from None
    return _Interpreter(names or {}).run(tree)


class _Interpreter:
    def __init__(self, names: dict[str, Any]) -> None:
        self.names = dict(names)

    def run(self, tree: ast.Module) -> Any:
        result = None
        for stmt in tree.body:
            if isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
                result = self.eval(stmt.value)
                for target in stmt.targets:
                    self.names[_name(target.id)] = result
            elif isinstance(stmt, ast.Expr):
                result = self.eval(stmt.value)
            else:
                raise ComputeError(f"not allowed: {type(stmt).__name__} statements")
        return self.names.get("ans", result)

    def eval(self, node: ast.AST) -> Any:
        handler = getattr(self, f"_{type(node).__name__}", None)
        if handler is None:
            raise ComputeError(f"not allowed: {type(node).__name__}")
        return _bounded(handler(node))

    def _Constant(self, node: ast.Constant) -> Any:
        if not isinstance(node.value, (int, float, str, bool)) or node.value is None:
            raise ComputeError(f"not allowed: constant {node.value!r}")
        return node.value

    def _Name(self, node: ast.Name) -> Any:
        name = _name(node.id)
        if name in self.names:
            return self.names[name]
        if name in FUNCTIONS:
            return FUNCTIONS[name]
        raise ComputeError(f"unknown name {name!r}")

    def _List(self, node: ast.List) -> list:
        return [self.eval(e) for e in node.elts]

    def _Tuple(self, node: ast.Tuple) -> tuple:
        return tuple(self.eval(e) for e in node.elts)

    def _BinOp(self, node: ast.BinOp) -> Any:
        op = _BINARY.get(type(node.op))
        if op is None:
            raise ComputeError(f"not allowed: operator {type(node.op).__name__}")
        left, right = self.eval(node.left), self.eval(node.right)
        if isinstance(node.op, ast.Pow) and (not _is_number(right) or abs(right) > MAX_EXPONENT):
            raise ComputeError(f"exponent too large (at most {MAX_EXPONENT})")
        if isinstance(node.op, ast.Mult) and (isinstance(left, (str, list, tuple)) or isinstance(right, (str, list, tuple))):
            raise ComputeError("not allowed: repeating a sequence")
        try:
            return op(left, right)
        except ZeroDivisionError:
            raise ComputeError("division by zero") from None
        except (TypeError, ValueError, OverflowError) as exc:
            raise ComputeError(f"{type(exc).__name__}: {exc}") from None

    def _UnaryOp(self, node: ast.UnaryOp) -> Any:
        op = _UNARY.get(type(node.op))
        if op is None:
            raise ComputeError(f"not allowed: operator {type(node.op).__name__}")
        return op(self.eval(node.operand))

    def _Call(self, node: ast.Call) -> Any:
        func = self.eval(node.func)
        if not callable(func):
            raise ComputeError("not allowed: calling a value")
        args = [self.eval(a) for a in node.args]
        kwargs = {_name(k.arg or ""): self.eval(k.value) for k in node.keywords}
        try:
            return func(*args, **kwargs)
        except ComputeError:
            raise
        except Exception as exc:  # a wrong argument is the program's error, reported for a retry
            raise ComputeError(f"{type(exc).__name__}: {exc}") from None

    def _Subscript(self, node: ast.Subscript) -> Any:
        value, key = self.eval(node.value), self.eval(node.slice)
        try:
            return value[key]
        except Exception as exc:
            raise ComputeError(f"{type(exc).__name__}: {exc}") from None


def _name(name: str) -> str:
    if name.startswith("_"):
        raise ComputeError(f"not allowed: name {name!r}")
    return name


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _bounded(value: Any) -> Any:
    if _is_number(value) and (abs(value) > MAX_MAGNITUDE or math.isinf(value)):
        raise ComputeError("result too large")
    if isinstance(value, (list, tuple, str)) and len(value) > MAX_ITEMS:
        raise ComputeError("result too large")
    return value
