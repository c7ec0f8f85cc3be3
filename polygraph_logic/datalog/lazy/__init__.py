"""Lazy facts: what a graph build leaves unmaterialized (``part``) and their derivation on demand
(``on_demand``)."""
