"""Computation as a tool: a tiny program over evidence values, run by an AST whitelist.

The model writes program-of-thought lines (`revenue = 46298`, `ans = round(gross / revenue, 3)`) or a
DataFrame expression (`df["2023"].sum()`). Nothing model-written reaches `eval` or `exec`: the
program is parsed with `ast` and interpreted node by node. Allowed: number and string literals,
lists, tuples, names bound by the program or given by the caller (evidence values, DataFrames),
arithmetic, comparisons, round/abs/min/max/sum/len/float/int, subscripts, and a short list of
pandas selection and aggregation methods. No imports, no loops, no function definitions, no
attribute outside that list, no dunder anywhere; powers, sizes and time are bounded.
"""

from __future__ import annotations

import ast
import math
import operator
import time
from typing import Any

import pandas as pd

MAX_SOURCE_CHARS = 2000
MAX_SECONDS = 1.0
MAX_EXPONENT = 64
MAX_MAGNITUDE = 1e15
MAX_ITEMS = 10_000

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}
_COMPARE = {ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Eq: operator.eq, ast.NotEq: operator.ne}
FUNCTIONS = {"round": round, "abs": abs, "min": min, "max": max, "sum": sum, "len": len,
             "float": float, "int": int}
# DataFrame / Series methods that select or aggregate, never mutate or reach outside.
METHODS = {"sum", "mean", "median", "max", "min", "count", "nunique", "idxmax", "idxmin", "sort_values",
           "head", "tail", "tolist", "abs", "round", "unique", "value_counts", "loc", "iloc", "str",
           "contains", "startswith", "lower", "astype", "dropna", "values", "index", "columns", "shape",
           "pct_change", "diff", "item"}


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
        self.deadline = time.monotonic() + MAX_SECONDS

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
        if time.monotonic() > self.deadline:
            raise ComputeError(f"took longer than {MAX_SECONDS} s")
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

    def _Compare(self, node: ast.Compare) -> Any:
        values = [self.eval(node.left), *(self.eval(c) for c in node.comparators)]
        result = True
        for op_node, left, right in zip(node.ops, values, values[1:]):
            op = _COMPARE.get(type(op_node))
            if op is None:
                raise ComputeError(f"not allowed: comparison {type(op_node).__name__}")
            result = result & op(left, right)
        return result

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

    def _Attribute(self, node: ast.Attribute) -> Any:
        attr = _name(node.attr)
        value = self.eval(node.value)
        if attr not in METHODS or not isinstance(value, (pd.DataFrame, pd.Series, pd.Index)) and not _is_accessor(value):
            raise ComputeError(f"not allowed: attribute {attr!r}")
        return getattr(value, attr)

    def _Subscript(self, node: ast.Subscript) -> Any:
        value, key = self.eval(node.value), self.eval(node.slice)
        try:
            return value[key]
        except Exception as exc:
            raise ComputeError(f"{type(exc).__name__}: {exc}") from None

    def _Slice(self, node: ast.Slice) -> slice:
        parts = [self.eval(p) if p is not None else None for p in (node.lower, node.upper, node.step)]
        return slice(*parts)


def _name(name: str) -> str:
    if name.startswith("_"):
        raise ComputeError(f"not allowed: name {name!r}")
    return name


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_accessor(value: Any) -> bool:
    # df.loc / series.str are pandas accessor objects, reached only through the whitelist above.
    return type(value).__module__.startswith("pandas.")


def _bounded(value: Any) -> Any:
    if _is_number(value) and (abs(value) > MAX_MAGNITUDE or math.isinf(value)):
        raise ComputeError("result too large")
    if isinstance(value, (list, tuple, str)) and len(value) > MAX_ITEMS:
        raise ComputeError("result too large")
    return value
