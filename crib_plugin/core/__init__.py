"""Layer 0, the ground: errors, plain records, settings, limits, time, entry kinds, cues, the
store's folder. Imports nothing else of crib's."""
