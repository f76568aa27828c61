import { HARNESS_BASE } from './harness-base';

/**
 * The Python program that runs workflow code (PySpur's `WorkflowBuilder` style) and reports the
 * graph it builds, without running any node. `from pyspur.workflow_builder import WorkflowBuilder`
 * (and `pyspur.schemas.workflow_schemas.SpurType`) import a recording stand-in defined here, so
 * the code needs nothing installed. The result is the first built definition the code leaves at
 * its top level, else the first builder, built: `{"definition", "name", "description", "placed"}`,
 * `placed` naming the nodes the builder placed (given no coordinates; `coordinates=None` leaves a
 * node unplaced, as a stored definition may have it). It is ASCII JSON, so any string survives,
 * unpaired surrogates included; whoever reads it validates it (it is the user's output).
 */
export const WORKFLOW_CODE_HARNESS =
  HARNESS_BASE +
  String.raw`
import copy, enum, types

NO_WORKFLOW = "The code builds no workflow: leave a WorkflowBuilder (or what its build() returns) in a top-level variable"


class SpurType(str, enum.Enum):
    WORKFLOW = "workflow"
    CHATBOT = "chatbot"
    AGENT = "agent"


def _plain(value):
    dump = getattr(value, "model_dump", None)
    return dump() if callable(dump) else value


class WorkflowDefinition:
    """What build() returns: the recorded graph, read as attributes or dumped as a dict."""

    def __init__(self, data, name, description, placed):
        self.__dict__.update(_data=data, _name=name, _description=description, _placed=placed)

    def __getattr__(self, name):
        try:
            return self.__dict__["_data"][name]
        except KeyError:
            raise AttributeError(name)

    def model_dump(self, **_kwargs):
        return copy.deepcopy(self._data)


class WorkflowBuilder:
    """Records nodes, links and test inputs as PySpur's builder does, laying out unplaced nodes alike."""

    def __init__(self, name, description=""):
        self.name = name
        self.description = description
        self.nodes = []
        self.links = []
        self.test_inputs = []
        self.spur_type = SpurType.WORKFLOW.value
        self._counts = {}
        self._row = 0
        self._next_x = {0: 100}
        self._placed = []

    # coordinates=None (given) keeps the node unplaced; left out, the builder places it.
    def add_node(self, node_type, config, id=None, title="", parent_id=None, coordinates=(),
                 dimensions=None, subworkflow=None, row=None):
        if id is None:
            base = node_type[:-4] if isinstance(node_type, str) and node_type.endswith("Node") else node_type
            self._counts[base] = self._counts.get(base, 0) + 1
            id = str(base) + "_" + str(self._counts[base])
        if coordinates is None:
            placed_at = None
        elif coordinates:
            placed_at = {"x": coordinates[0], "y": coordinates[1]}
        else:
            if row is not None:
                self._row = row
            x = self._next_x.get(self._row, 100)
            placed_at = {"x": x, "y": self._row * 150 + 100}
            self._next_x[self._row] = x + 250
            self._placed.append(id)
        self.nodes.append({
            "id": id,
            "title": title or id,
            "parent_id": parent_id,
            "node_type": node_type,
            "config": config,
            "coordinates": placed_at,
            "dimensions": {"width": dimensions[0], "height": dimensions[1]} if dimensions else None,
            "subworkflow": _plain(subworkflow),
        })
        return id

    def add_link(self, source_id, target_id, source_handle=None, target_handle=None):
        self.links.append({"source_id": source_id, "target_id": target_id,
                           "source_handle": source_handle, "target_handle": target_handle})

    def add_test_input(self, input_data):
        self.test_inputs.append(input_data)

    def set_spur_type(self, spur_type):
        self.spur_type = spur_type.value if isinstance(spur_type, SpurType) else spur_type

    def build(self):
        data = {"nodes": list(self.nodes), "links": list(self.links),
                "test_inputs": list(self.test_inputs), "spur_type": self.spur_type}
        return WorkflowDefinition(data, self.name, self.description, list(self._placed))

    def to_dict(self):
        return self.build().model_dump()

    def to_json(self, indent=2):
        import json
        return json.dumps(self.to_dict(), indent=indent, default=_encode)

    @classmethod
    def from_workflow_definition(cls, workflow_def, name="", description=""):
        builder = cls(name or "Imported Workflow", description)
        data = _plain(workflow_def)
        builder.nodes = list(data.get("nodes", []))
        builder.links = list(data.get("links", []))
        builder.test_inputs = list(data.get("test_inputs", []))
        builder.spur_type = data.get("spur_type", SpurType.WORKFLOW.value)
        return builder


def install_modules():
    names = ["pyspur", "pyspur.workflow_builder", "pyspur.schemas", "pyspur.schemas.workflow_schemas"]
    modules = {name: types.ModuleType(name) for name in names}
    modules["pyspur"].__path__ = []
    modules["pyspur.schemas"].__path__ = []
    modules["pyspur"].workflow_builder = modules["pyspur.workflow_builder"]
    modules["pyspur"].schemas = modules["pyspur.schemas"]
    modules["pyspur.schemas"].workflow_schemas = modules["pyspur.schemas.workflow_schemas"]
    modules["pyspur.workflow_builder"].WorkflowBuilder = WorkflowBuilder
    schemas = modules["pyspur.schemas.workflow_schemas"]
    schemas.SpurType = SpurType
    schemas.WorkflowDefinitionSchema = WorkflowDefinition
    sys.modules.update(modules)


def result_of(namespace):
    values = list(namespace.values())
    built = next((v for v in values if isinstance(v, WorkflowDefinition)), None)
    if built is None:
        builder = next((v for v in values if isinstance(v, WorkflowBuilder)), None)
        built = builder.build() if builder is not None else None
    if built is None:
        return None
    return {"definition": built.model_dump(), "name": built._name, "description": built._description,
            "placed": built._placed}


def run(memory_mb):
    code = json_loads(sys.stdin.buffer.read().decode("utf-8"))["code"]
    try:
        compiled = compile(code, USER_FILE, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return {"ok": False, "error": str(syntax_error(exc, 0))}
    except ValueError as exc:  # a NUL byte in the source
        return {"ok": False, "error": "SyntaxError: " + str(exc)}
    remember_source(code)
    install_modules()
    namespace = {"__name__": "__workflow_code__", "WorkflowBuilder": WorkflowBuilder}
    try:
        exec(compiled, namespace)
        output = result_of(namespace)
    except MemoryError:
        return memory_error(memory_mb)
    except BaseException as exc:
        return {"ok": False, "error": describe(exc)}
    if output is None:
        return {"ok": False, "error": NO_WORKFLOW}
    return {"ok": True, "output": output}


main(run, ensure_ascii=True)
`;
