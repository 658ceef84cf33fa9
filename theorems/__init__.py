"""The result library, shipped as package data: one TOML file per result."""
