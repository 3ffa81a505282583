"""What a regeneration costs and whether it fits: measured unit costs and the CPU/GPU gate
(``costs``), the plan of what a regeneration would train (``plan``), the cold times printed
before it (``cold_times``), and the budget ladders (``ladder``).
"""
