"Synth: a small Task of sinusoids in four domains, registered as dataset 'synth'."
import torch
from prism_nb.core import ISMTS, derive_seed
from prism_nb.config import Task, TaskData, register_task, check_real, check_int
from prism_nb.engine import predict, percent_correct
from prism_nb.config import observe, observe_tests

N_CLASSES, N_DOMAINS, L_SYNTH, D_SYNTH = 3, 4, 64, 3
SYNTH_CONDITIONS = ('Random', 'Regular', 'Desync', 'Rand-Feat.', 'First', 'Mid')


def synth_windows(domain: int, n: int, seed: int, min_length: int = L_SYNTH) -> ISMTS:
    "`n` windows of one domain, class k a sinusoid of (1, 2, 4)[k] cycles, `min_length`-64 steps."
    g = torch.Generator().manual_seed(derive_seed(seed, 'synth', domain))
    y = torch.arange(n) % N_CLASSES
    t = torch.linspace(0, 1, L_SYNTH).expand(n, L_SYNTH).contiguous()
    # the domain shift: each domain stretched, louder and noisier than the one before
    cycles = torch.tensor([1., 2., 4.])[y] * (1 + .05 * domain)
    phase = torch.rand(n, 1, D_SYNTH, generator=g) * 2 * torch.pi
    v = (1 + .2 * domain) * torch.sin(2 * torch.pi * cycles[:, None, None] * t[..., None] + phase)
    v = v + (.1 + .2 * domain) * torch.randn(n, L_SYNTH, D_SYNTH, generator=g)
    d = torch.full((n,), domain, dtype=torch.long)
    observed = torch.ones_like(v)
    if min_length < L_SYNTH:  # recordings of different lengths, zero-padded to 64 steps
        lg = torch.Generator().manual_seed(derive_seed(seed, 'synth-length', domain))
        length = torch.randint(min_length, L_SYNTH + 1, (n, 1, 1), generator=lg)
        observed = (torch.arange(L_SYNTH).view(1, -1, 1) < length).float().expand_as(v)
    return ISMTS(v * observed, observed, t, y.long(), d).validate()


def check_synth(cfg: dict):
    "The task's own keys: a budget in (0, 1], a domain to hold out, at least 8 windows per domain."
    cfg['rate'] = check_real('rate', cfg['rate'], 0, 1, lo_open=True)
    cfg['target'] = check_int('target', cfg['target'], 0, N_DOMAINS - 1)
    cfg['n_per_domain'] = check_int('n_per_domain', cfg['n_per_domain'], 8)
    cfg['min_length'] = check_int('min_length', cfg['min_length'], 8, L_SYNTH)


def synth_splits(cfg: dict) -> tuple:
    "(train, val, test): the source domains' windows split 4:1, and the target's."
    n, seed = cfg['n_per_domain'], cfg['seed']
    sources = [d for d in range(N_DOMAINS) if d != cfg['target']]
    source = ISMTS.cat([synth_windows(d, n, seed, cfg['min_length']) for d in sources])
    g = torch.Generator().manual_seed(derive_seed(seed, 'synth-val'))
    order, n_val = torch.randperm(len(source), generator=g), len(source) // 5
    test = synth_windows(cfg['target'], n, seed, cfg['min_length'])
    return source[order[n_val:]], source[order[:n_val]], test


def load_synth(cfg: dict) -> TaskData:
    "Source windows observed through Random, the target's through each condition, at the budget."
    train, val, test = synth_splits(cfg)
    seed, rate = cfg['seed'], cfg['rate']
    masks = lambda *keys: derive_seed(seed, 'masks', *keys)  # every mask drawn from the run's seed
    tests = observe_tests(test, SYNTH_CONDITIONS, rate, seed)  # as evaluate(conditions=) draws
    return TaskData(train=observe(train, 'Random', rate, masks('train')),
                    val=observe(val, 'Random', rate, masks('val')), tests=tests,
                    info=dict(n_classes=N_CLASSES, n_domains=N_DOMAINS, n_features=D_SYNTH,
                              seq_len=L_SYNTH, n_train=len(train), n_val=len(val),
                              n_test=len(test)))  # the sizes the model is built with, and facts


def evaluate_synth(algo, data: TaskData, cfg: dict) -> dict:
    "Accuracy (%) on the held-out domain under each condition, and their mean."
    metrics = {c: percent_correct(predict(algo, x).cpu(), x.y) for c, x in data.tests.items()}
    return dict(metrics=metrics, avg=sum(metrics.values()) / len(metrics))


def synth_record_stem(cfg: dict) -> tuple:
    "The record's name, e.g. erm_cnn_t3_s0 (no subfolder)."
    return (), f"{cfg['method']}_{cfg['backbone']}_t{cfg['target']}_s{cfg['seed']}"


SYNTH = register_task(Task(
    name='synth', display='Synthetic sinusoids',
    # its keys, declared once; min_length < 64: windows of 64 steps or fewer, zero-padded
    defaults=dict(rate=0.3, target=N_DOMAINS - 1, n_per_domain=256, min_length=L_SYNTH),
    check=check_synth, load=load_synth, evaluate=evaluate_synth, record_stem=synth_record_stem,
    conditions=SYNTH_CONDITIONS, test_windows=lambda cfg: synth_splits(cfg)[2],
    averages=lambda cfg: {'avg': list(SYNTH_CONDITIONS)}))  # avg, their mean: checked on each read
