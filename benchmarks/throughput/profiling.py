"""cProfile of the reference agent under one workload, summarised by package, C builtin and own function.

(cProfile is in the standard library; py-spy is not installed.)
"""

from __future__ import annotations

import pstats
import time
from collections.abc import Iterable
from pathlib import Path

from benchmarks import common, servers
from benchmarks.throughput.client import Target, measure, prepare


def package_of(filename: str) -> str:
    if filename.startswith("~") or filename.startswith("<"):
        return "C functions (see below)"
    path = Path(filename)
    parts = path.parts
    if "site-packages" in parts:
        return parts[parts.index("site-packages") + 1].split(".")[0]
    if "reference_agent" in parts:
        return f"reference_agent/{path.name}"
    if "schemas" in parts:
        return "schemas"
    if "lib" in parts and any(p.startswith("python3") for p in parts):
        rest = parts[parts.index("lib") + 2 :]
        return "stdlib " + (rest[0].removesuffix(".py") if rest else path.stem)
    return path.name


def summarise_profile(path: Path, top: int = 14) -> str:
    stats = pstats.Stats(str(path))
    total = sum(v[2] for v in stats.stats.values()) or 1.0  # tottime
    by_package: dict[str, float] = {}
    by_builtin: dict[str, float] = {}
    for key, (_, _, tottime, _, _) in stats.stats.items():
        package = package_of(key[0])
        by_package[package] = by_package.get(package, 0.0) + tottime
        if key[0] == "~":
            by_builtin[key[2]] = by_builtin.get(key[2], 0.0) + tottime
    cumulative = []
    for key, (_, _, _, cumtime, _) in stats.stats.items():
        if "reference_agent" in key[0] or "schemas" in key[0]:
            cumulative.append((f"{Path(key[0]).parent.name}/{Path(key[0]).name}:{key[2]}", cumtime))
    return "\n\n".join(
        [
            f"profile {path.name}: {total:.2f} s of CPU in Python frames (tottime)",
            _shares("where (own time)", by_package.items(), total, top),
            _shares("C builtin", by_builtin.items(), total, 8),
            _shares("reference_agent / schemas function (cumulative)", cumulative, total, top),
        ]
    )


def _shares(what: str, seconds: Iterable[tuple[str, float]], total: float, top: int) -> str:
    """The ``top`` largest of ``seconds``, each with its share of ``total``."""
    rows = sorted(seconds, key=lambda kv: -kv[1])[:top]
    return common.table([what, "s", "%"], [(k, f"{v:.2f}", f"{100 * v / total:.1f}") for k, v in rows])


async def profile(methods: tuple[str, ...], concurrency: int, warmup: float, duration: float) -> None:
    for method in methods:
        with common.workdir("bench-profile-") as work:
            out = work / f"reference-{method}.prof"
            with servers.reference_agent(work, profile=out) as server:
                target = Target("reference", server.url, common.reference_headers())
                run_id = f"p{int(time.time())}"
                await prepare(target, run_id)
                cell = await measure(target, method, concurrency, warmup, duration, run_id)
            print(
                f"\n== cProfile of the reference agent: {method}, c={concurrency}: {cell.rps:.0f} req/s under cProfile"
            )
            print(summarise_profile(out))
