# The layer graph: one folder and one library per layer, lowest first. A layer
# may include and link only the layers listed for it (and itself). The build
# enforces this twice (src/CMakeLists.txt): corral_layer_includes fails on an
# #include "<folder>/..." outside the list, and corral_layer_link_<layer> links
# the whole layer with only its listed layers, so a call into any other layer
# is an undefined reference. docs/architecture.md explains the order.
set(CORRAL_LAYERS base net kernel policy audit state config resolve gate repair overlay confine exec run executor tools mcp)
set(CORRAL_LAYER_DEPS_base "")
# net: the network supervisor's pieces (the name server, the egress proxy and
# the host rules it applies, their strict readers); plain values and bytes, no
# policy.
set(CORRAL_LAYER_DEPS_net base)
set(CORRAL_LAYER_DEPS_kernel base)
set(CORRAL_LAYER_DEPS_policy base net)
set(CORRAL_LAYER_DEPS_audit base)
set(CORRAL_LAYER_DEPS_state base policy)
set(CORRAL_LAYER_DEPS_config base policy)
set(CORRAL_LAYER_DEPS_resolve base policy config state)
set(CORRAL_LAYER_DEPS_gate base policy audit state resolve)
set(CORRAL_LAYER_DEPS_repair base policy state)
# overlay: an overlay run's directory in the state, its changes, diff and apply.
set(CORRAL_LAYER_DEPS_overlay base policy state)
set(CORRAL_LAYER_DEPS_confine base net kernel policy)
# exec spawns and supervises what a Plan says; it never sees the Policy.
set(CORRAL_LAYER_DEPS_exec base net kernel confine)
# run: the whole life of one admitted command (RunConfined).
set(CORRAL_LAYER_DEPS_run base net kernel policy audit state gate repair overlay confine exec)
# executor: the library API for harnesses (ExecutorSet, Executor, Process):
# every call through gate::Admit and RunConfined.
set(CORRAL_LAYER_DEPS_executor base net kernel policy audit state config resolve gate repair overlay confine exec run)
# tools: the agent's tools (the file tools behind the fence, bash through
# RunConfined), each call one typed result; no transport.
set(CORRAL_LAYER_DEPS_tools base net kernel policy audit state config resolve gate repair overlay confine exec run)
# mcp: the stdio MCP server (JSON-RPC 2.0, elicitation, cancellation) over tools.
set(CORRAL_LAYER_DEPS_mcp base net kernel policy audit state config resolve gate repair overlay confine exec run tools)
# cli (the executable) may use every layer; testing/ (test helpers) is for tests only.
