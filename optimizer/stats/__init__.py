"""The statistics of a comparison: paired tests, the gate's power, failed-call changes, episode cost."""
