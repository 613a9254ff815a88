"""Agents packaged in MLE-bench's format (`agents/<id>/config.yaml`, a Dockerfile, start.sh).

- `mlebench`: read a folder of such agents into variants (ids, kwargs, env vars, secrets);
- `importer`: store them as AgentDefinition rows, one per id, versioned by content hash;
- `images`: build each agent's image on this Docker host, FROM the `mlebench-env` base;
- `base_image`: the recipe of that base (runner.host.agent_image builds it);
- `sandbox`: what a sandbox of such an agent gets (MLE-bench's container contract).
"""
