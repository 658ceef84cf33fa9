"""The .absorb grammar, shipped as package data (see ``absorb.lark``)."""
