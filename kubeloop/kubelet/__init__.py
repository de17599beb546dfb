"""The simulated node agent: schedules pods and moves them through their phases."""
