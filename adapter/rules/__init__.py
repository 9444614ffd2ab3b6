"""PromQL rule engine, compatible with prometheus-adapter rule files. Pure: no I/O."""
