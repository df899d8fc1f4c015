# SPDX-License-Identifier: Apache-2.0
"""dpmetrics for people who plan and read campaigns: dpm-sim's C core (libdpmsim.so) in Python.

    import dpmetrics as dm
    sim = dm.simulate(df, [{"name": "roc", "mechanism": "roc_hist", "eps": 1, "bins": 10}],
                      devices=100_000)
    sim.summary                      # per item: truth, rmse, coverage of the intervals
    dm.plan("roc_hist_groups", error=0.05, confidence=0.9, eps=1, shares=[0.6, 0.3, 0.1])

host-sim/python/README.md says what each call does and how it is checked.
"""
from ._native import DpmError, version
from .plan import plan
from .population import check as check_population, read_csv
from .simulate import Simulation, simulate
from .collector import Collector, Estimate, collector, read_estimate, read_store

__all__ = ["Collector", "DpmError", "Estimate", "Simulation", "check_population", "collector",
           "plan", "read_csv", "read_estimate", "read_store", "simulate", "version"]
