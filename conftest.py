"""The kit's own checkout: the plugin loads by its pytest11 entry point, as it does where the kit is installed."""
