"""The admin guide documents every command and option exactly as module.py
and options.py declare them.

They are read with `ast`, so this needs no mgr.  (The guide's build is
checked by `tox -e docs`.)
"""
import ast
import csv
import os
import re
from typing import Any, Dict, List, Set, Tuple

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
MODULE = os.path.join(REPO, 'src', 'pybind', 'mgr', 'rocks_autotune', 'module.py')
PACKAGE = os.path.join(REPO, 'src', 'pybind', 'mgr', 'rocks_autotune')
HEALTH = os.path.join(PACKAGE, 'health.py')
OPTIONS = os.path.join(PACKAGE, 'options.py')
GUIDE = os.path.join(REPO, 'doc', 'mgr', 'rocks_autotune.rst')


def tree() -> ast.Module:
    return ast.parse(open(MODULE).read())


def constants(t: ast.Module) -> Dict[str, Any]:
    out = {}
    for node in t.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return out


def value(node: ast.AST, consts: Dict[str, Any]) -> Any:
    if isinstance(node, ast.Name):
        return consts[node.id]
    if isinstance(node, ast.BinOp):  # e.g. 4 << 20
        return eval(compile(ast.Expression(node), MODULE, 'eval'), {}, dict(consts))
    return ast.literal_eval(node)


def options() -> List[Tuple[str, str, Any]]:
    """(name, type, default) of every option: the Opt(...) of options.py's
    table and the Option(...) left in module.py (the panel's)."""
    found = []
    for path in (OPTIONS, MODULE):
        t = ast.parse(open(path).read())
        consts = constants(t)
        for node in ast.walk(t):
            if isinstance(node, ast.Call) and getattr(node.func, 'id', '') in ('Option', 'Opt') \
                    and isinstance(node.args[0], ast.Constant):  # not module.py's Option(o.name..)
                kw = {k.arg: k.value for k in node.keywords}
                name = ast.literal_eval(node.args[0])
                found.append((name, value(kw['type'], consts),
                              value(kw['default'], consts) if 'default' in kw else None))
    return found


def commands() -> List[Tuple[str, List[str]]]:
    """(command, [argument names]) of every CLI command in module.py."""
    found = []
    for node in ast.walk(tree()):
        if isinstance(node, ast.FunctionDef):
            for d in node.decorator_list:
                if isinstance(d, ast.Call) and getattr(d.func, 'id', '').startswith('CLI'):
                    args = [a.arg for a in node.args.args[1:]]
                    found.append((ast.literal_eval(d.args[0]), args))
    return found


def guide() -> str:
    return open(GUIDE).read()


def option_rows() -> Dict[str, List[str]]:
    """The options table: name -> [type, default, meaning]."""
    # the options table: the csv-table whose header's first cell is Option
    table = next(t for t in guide().split('\n.. csv-table::')[1:]
                 if t.startswith('\n   :header: Option,'))
    body = table.split('\n\n', 2)[1]
    rows = csv.reader((line.strip() for line in body.splitlines()), skipinitialspace=True)
    return {r[0].strip('`'): r[1:] for r in rows}


def test_module_source_is_read() -> None:
    names = [o[0] for o in options()]
    assert 'warmup' in names and len(names) >= 10
    assert ('rocks-autotune start', ['osd', 'trials', 'budget', 'workload', 'duration',
                                     'force', 'allow_single_copy', 'objective']) in commands()


def test_every_command_and_argument_is_documented() -> None:
    text = guide()
    for cmd, args in commands():
        verb = cmd.split()[-1]
        assert f'ceph {cmd}' in text, cmd
        assert re.search(rf'^{verb}\b.*\n-+$|^stop and abort\n-+$', text, re.M), \
            f'no section for {cmd}'
        for a in args:
            if a != 'format':
                # the ceph CLI takes --allow-single-copy for allow_single_copy
                flag = '--' + a.replace('_', '-')
                assert flag in text, f'{cmd}: {flag} not documented'
            else:
                assert '--format plain|json|json-pretty' in text


def test_no_argument_is_one_the_ceph_cli_takes_for_itself() -> None:
    # `ceph ... status --verbose` would reach the CLI's own --verbose (it then
    # lists every command), never the module: seen on the lab
    with open('/usr/bin/ceph') as f:
        own = set(re.findall(r"add_argument\((?:'-\w', )?'(--[\w-]+)'", f.read()))
    assert {'--verbose', '--format', '--status'} <= own, own
    for cmd, args in commands():
        taken = {'--' + a.replace('_', '-') for a in args if a != 'format'} & own
        assert not taken, f'{cmd}: {taken}'


def test_every_option_is_in_the_table_with_its_type_and_default() -> None:
    rows = option_rows()
    declared = options()
    assert set(rows) == {name for name, _, _ in declared}, set(rows) ^ {n for n, _, _ in declared}
    for name, typ, default in declared:
        doc_type, doc_default = rows[name][0], rows[name][1]
        assert doc_type == typ, (name, doc_type, typ)
        shown = '(empty)' if default in ('', None) else str(default)
        assert doc_default == shown, (name, doc_default, shown)


def health_codes() -> Set[str]:
    """Every health check the module can raise: health.py's table (read from
    its source, as the module is not imported here), with its prefix."""
    tree = ast.parse(open(HEALTH).read())
    prefix, codes = '', set()
    for n in tree.body:
        target = n.targets[0] if isinstance(n, ast.Assign) else (
            n.target if isinstance(n, ast.AnnAssign) else None)
        name = getattr(target, 'id', '')
        if name == 'HEALTH_PREFIX':
            prefix = ast.literal_eval(n.value)  # type: ignore[union-attr, arg-type]
        elif name == 'CHECKS' and isinstance(n.value, ast.Dict):  # type: ignore[union-attr]
            keys = n.value.keys  # type: ignore[union-attr]
            codes = {ast.literal_eval(k) for k in keys}  # type: ignore[arg-type]
    assert prefix and codes
    return {prefix + c for c in codes}


def test_every_health_code_is_documented() -> None:
    for code in health_codes():
        assert f'``{code}``' in guide(), code


def test_every_health_code_is_raised_from_the_records_and_nowhere_else() -> None:
    # health.py computes them all, past its table, from the records
    raising = open(HEALTH).read().split('\ndef ', 1)[1]
    table = {c.split('ROCKS_AUTOTUNE_', 1)[1] for c in health_codes()}
    raised = set(re.findall(r"'([A-Z_]+)'", raising))
    assert table <= raised, table - raised
    # no check is built by hand anywhere else
    src = ''.join(open(os.path.join(PACKAGE, f)).read() for f in sorted(os.listdir(PACKAGE))
                  if f.endswith('.py') and f != 'health.py')
    assert not re.search(r"'severity':\s*'(warning|error)'", src)


def test_ceph_style() -> None:
    text = guide()
    assert text.startswith('.. _mgr-rocks-autotune:\n')
    # Ceph's `prompt` directive is a Ceph Sphinx extension: not here
    assert '.. prompt::' not in text
    assert ':ref:`rocks-autotune-fault-matrix`' in text


def test_start_defaults_are_the_declared_ones() -> None:
    source = open(MODULE).read()
    text = guide().split('\nstart\n-----\n', 1)[1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name == 'cmd_start':
            args = node.args.args[-len(node.args.defaults):]
            checked = 0
            for a, d in zip(args, node.args.defaults):
                shown = ast.get_source_segment(source, d)
                if shown in ('None', 'False'):
                    continue
                section = ' '.join(text.split(f'``--{a.arg}``', 1)[1].split('``--', 1)[0].split())
                assert f'(default {shown})' in section or f'``{shown.strip(chr(39))}`` (default)' \
                    in section, (a.arg, shown)
                checked += 1
            assert checked >= 4
            return
    raise AssertionError('cmd_start not found')


def test_every_test_the_fault_matrix_names_exists() -> None:
    text = open(os.path.join(REPO, 'doc', 'dev', 'fault-matrix.rst')).read()
    named = set(re.findall(r'``(test_\w+)``', text))
    assert len(named) > 20
    defined = set()
    for top in ('tests', 'qa'):
        for d, _, files in os.walk(os.path.join(REPO, top)):
            for f in files:
                if f.endswith('.py'):
                    source = open(os.path.join(d, f)).read()
                    defined |= set(re.findall(r'^\s*def (test_\w+)\(', source, re.M))
    assert not named - defined, sorted(named - defined)


def test_every_design_pointer_in_the_module_names_a_label_its_file_defines() -> None:
    # the module docstrings point at their design notes (doc/dev): a moved or
    # renamed section must not leave a pointer to nothing
    pointers = []
    for name in sorted(os.listdir(PACKAGE)):
        if name.endswith('.py'):
            text = open(os.path.join(PACKAGE, name)).read()
            pointers += [(name, doc, label) for doc, label in re.findall(
                r'Design: (doc/[\w/.-]+\.rst), ([\w-]+)', text)]
    assert len(pointers) > 20
    missing = [p for p in pointers
               if f'.. _{p[2]}:' not in open(os.path.join(REPO, p[1])).read()]
    assert missing == []
