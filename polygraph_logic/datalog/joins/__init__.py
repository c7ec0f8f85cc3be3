"""Rule bodies compiled into join plans: one closure per body literal, unit-label steps, aggregates,
subsumption."""
