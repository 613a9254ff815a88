"""What a runner machine does for a task without the database, for a runner attached by URL and token
(`runner.remote`) and the site's research grading side: its hardware and
slots, the scratch folder, reading the agent's files (`sandbox_files`, `live`) and storing them
(`outputs`, `output_budget`), how a sandbox ended (`outcomes`), networks, secrets, the LLM gateway's
start (`llm_access`), the agent base image and the runner's settings checks. It imports neither
`runner.models` nor `leaderboard` (`tests/runner/test_remote_runner_imports.py`)."""
