"""The seed's acceptance gates, measured (``almanac gates``; DESIGN §9).

``almanac.gates.harness`` runs each gate and prints its line; ``acceptance`` drives claims at
every acceptance point, ``rollback`` the epoch-bump gate, ``fleet`` the fleet-recovery scenario,
``id_determinism`` the ID corpus, ``fixtures`` the specs and ledgers they share. ``simulation``
and ``simulated_clock`` run the production workflows and activities on a fixed calendar (the
gates and the test suite use them; production workers never register them). The library
(``almanac``) never imports this package; only the ``gates`` command does, inside the command.
"""
