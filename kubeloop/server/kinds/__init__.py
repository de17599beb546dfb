"""Facts about the built-in kinds that come from upstream's published schemas."""
