"""Routing in one run (README.md); `coupling`: can a policy route? (gradient cosine across question forms)."""
