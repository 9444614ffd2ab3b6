"""The aiohttp app serving the metrics APIs; knows the provider seam only."""
