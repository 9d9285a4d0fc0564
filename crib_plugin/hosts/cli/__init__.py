"""The ``crib`` command line, by concern (this ``__init__`` stays empty: it is loaded on every prompt).

* :mod:`.io` — stdin (bounded, never failing) and the fail-open log (a leaf);
* :mod:`.hotpath` — the console script's ``main``: the per-prompt commands without click, everything
  else handed to :mod:`.app`; :mod:`.retrieve` — ``crib retrieve``, shared by both paths;
* :mod:`.app` — the click group, lazy: its command table names each command's module, and only the
  command run is imported. The commands by group: :mod:`.writing` (write), :mod:`.data` (types, retrieve, search),
  :mod:`.transfer` (import, export, facts, reindex), :mod:`.admin` (init, doctor, scrub), :mod:`.serve`
  (mcp), :mod:`.hooks` (``crib hook …``), :mod:`.migrate`, :mod:`.manage` (where, list, show, stats,
  forget, correct, cue, log); added through ``register_commands``: :mod:`.registered` (eval,
  eval-noanswer), :mod:`.calibration`, :mod:`.recall`, :mod:`.describe` (config, plugins);
  :mod:`.common` holds what they share.
"""
