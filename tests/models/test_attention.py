"""The self-attention model: permutation equivariance, exact padding, its model file, allRank's
models as the oracle (the published package when installed, and a re-derivation of its
published model structure written here), allRank's loss functions on the same scores."""

from __future__ import annotations

import itertools
import json
import math
import sys
import types

import numpy as np
import pytest

pytest.importorskip("torch")

import torch

from ndcglab.errors import DataFormatError, SpecError
from ndcglab.losses import get_loss
from ndcglab.models import load_model, save_model
from ndcglab.models.allrank import read_allrank
from ndcglab.models.attention import AttentionModel

F = 7


def _model(**kw) -> AttentionModel:
    torch.manual_seed(3)
    opts = {"hidden": (16, 12), "heads": 3, "blocks": 2, "ff_width": 20, "dropout": 0.1}
    return AttentionModel(F, **{**opts, **kw}).eval()


@pytest.mark.parametrize("layer_norm", ["pre", "post"])
def test_shuffling_a_list_permutes_its_scores(layer_norm):
    model = _model(layer_norm=layer_norm, input_norm=True)
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.normal(size=(11, F)), dtype=torch.float32)
    perm = torch.as_tensor(rng.permutation(11))
    with torch.no_grad():
        s, sp = model(x), model(x[perm])
    assert float((sp - s[perm]).abs().max()) <= 1e-6
    # and the scores do depend on the other documents (the model is not pointwise)
    with torch.no_grad():
        alone = model(x[:3])
    assert float((alone - s[:3]).abs().max()) > 1e-3


def test_padding_a_list_inside_a_longer_batch_changes_none_of_its_scores():
    model = _model()
    rng = np.random.default_rng(1)
    lengths = [4, 13, 1, 9]
    b = np.concatenate([[0], np.cumsum(lengths)])
    x = torch.tensor(rng.normal(size=(b[-1], F)), dtype=torch.float32)
    with torch.no_grad():
        alone = torch.cat([model(x[b[i] : b[i + 1]]) for i in range(len(lengths))])
        flat = model.score_lists(x, b)
        # the training loop's layout: rows of x gathered into (B, M) by a pad index
        cols = np.arange(max(lengths))
        mask = cols[None, :] < np.array(lengths)[:, None]
        index = np.where(mask, b[:-1, None] + cols[None, :], 0)
        padded = model.score_padded(x, torch.as_tensor(index), torch.as_tensor(mask))
        # padded further with garbage features in the padded cells
        big = torch.full((len(lengths), 30, F), 1e3)
        big_mask = torch.zeros((len(lengths), 30), dtype=torch.bool)
        for i, n in enumerate(lengths):
            big[i, :n] = x[b[i] : b[i + 1]]
            big_mask[i, :n] = True
        garbage = model(big, big_mask)[big_mask]
    assert float((flat - alone).abs().max()) <= 1e-6
    assert float((padded[torch.as_tensor(mask)] - alone).abs().max()) <= 1e-6
    assert float((garbage - alone).abs().max()) <= 1e-6
    pred = model.predict(x.numpy(), boundaries=b, batch_size=5)  # chunks of whole lists
    np.testing.assert_allclose(pred, alone.double().numpy(), rtol=0, atol=1e-6)
    # a list without any real document gives finite (meaningless) scores, no NaN
    with torch.no_grad():
        empty = model(big[:1], torch.zeros((1, 30), dtype=torch.bool))
    assert bool(torch.isfinite(empty).all())


def test_model_file_round_trip_and_schema(tmp_path):
    model = _model(layer_norm="post", output_activation="sigmoid")
    path = save_model(tmp_path / "a.ndcglab", model)
    back = load_model(path)
    x = np.random.default_rng(2).normal(size=(9, F)).astype(np.float32)
    np.testing.assert_array_equal(back.predict(x), model.predict(x))
    assert back.model.config() == model.config()
    n = sum(p.numel() for p in model.parameters())
    from ndcglab.models.attention import attention_parameter_count

    assert attention_parameter_count(model.config()) == n
    assert attention_parameter_count(_model(blocks=0, input_norm=True).config()) == sum(
        p.numel() for p in _model(blocks=0, input_norm=True).parameters()
    )


@pytest.mark.parametrize(
    "bad",
    [{"heads": 5}, {"hidden": ()}, {"layer_norm": "middle"}, {"activation": "swish"},
     {"blocks": -1}, {"dropout": 1.0}, {"norm_style": "rms"}],
)  # fmt: skip
def test_bad_options_are_refused(bad):
    with pytest.raises(SpecError):
        AttentionModel(F, **bad)


# ---------------------------------------------------------------------- allRank as the oracle
#: allRank's example configuration (allrank/config.json of the repository), n_features from data
ALLRANK_MODEL = {
    "fc_model": {"sizes": [12], "input_norm": False, "activation": None, "dropout": 0.0},
    "transformer": {"N": 2, "d_ff": 24, "h": 2, "positional_encoding": None, "dropout": 0.1},
    "post_model": {"output_activation": "Sigmoid", "d_output": 1},
}


class _RederivedAllRank(torch.nn.Module):
    """allRank's LTRModel as its published source describes it (the Annotated Transformer's
    pre-norm encoder; LayerNorm ``a·(x − mean)/(std + 1e-6) + b`` with the unbiased std; masked
    logits −inf), written here from that description with allRank's parameter names."""

    def __init__(self, n_features, cfg):
        super().__init__()
        fc, tr, post = cfg["fc_model"], cfg["transformer"], cfg["post_model"]
        sizes = [n_features, *fc["sizes"]]
        self.fc_act = fc["activation"]
        self.input_layer = torch.nn.Module()
        if fc["input_norm"]:
            self.input_layer.input_norm = torch.nn.LayerNorm(n_features)
        self.input_layer.layers = torch.nn.ModuleList(
            torch.nn.Linear(a, b) for a, b in itertools.pairwise(sizes)
        )
        d = sizes[-1]
        self.h = tr["h"] if tr else 1
        self.encoder = torch.nn.Module()
        layers = []
        for _ in range(tr["N"] if tr else 0):
            layer = torch.nn.Module()
            layer.self_attn = torch.nn.Module()
            layer.self_attn.linears = torch.nn.ModuleList(torch.nn.Linear(d, d) for _ in range(4))
            layer.feed_forward = torch.nn.Module()
            layer.feed_forward.w_1 = torch.nn.Linear(d, tr["d_ff"])
            layer.feed_forward.w_2 = torch.nn.Linear(tr["d_ff"], d)
            layer.sublayer = torch.nn.ModuleList(torch.nn.Module() for _ in range(2))
            for sub in layer.sublayer:
                sub.norm = self._norm(d)
            layers.append(layer)
        self.encoder.layers = torch.nn.ModuleList(layers)
        if tr:
            self.encoder.norm = self._norm(d)
        self.output_layer = torch.nn.Module()
        self.output_layer.w_1 = torch.nn.Linear(d, 1)
        self.out_act = post["output_activation"]

    @staticmethod
    def _norm(d):
        m = torch.nn.Module()
        m.a_2 = torch.nn.Parameter(torch.ones(d))
        m.b_2 = torch.nn.Parameter(torch.zeros(d))
        return m

    @staticmethod
    def _ln(m, x):
        return m.a_2 * (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + 1e-6) + m.b_2

    def forward(self, x, pad):  # pad: True = padded, as allRank's mask
        if hasattr(self.input_layer, "input_norm"):
            x = self.input_layer.input_norm(x)
        for lin in self.input_layer.layers:
            x = lin(x)
            if self.fc_act:
                x = getattr(torch.nn, self.fc_act)()(x)
        bsz, n, d = x.shape
        dk = d // self.h
        for layer in self.encoder.layers:
            y = self._ln(layer.sublayer[0].norm, x)
            q, k, v = (
                lin(y).view(bsz, n, self.h, dk).transpose(1, 2)
                for lin in layer.self_attn.linears[:3]
            )
            logits = q @ k.transpose(-2, -1) / math.sqrt(dk)
            logits = logits.masked_fill(pad[:, None, None, :], float("-inf"))
            att = (torch.softmax(logits, -1) @ v).transpose(1, 2).reshape(bsz, n, d)
            x = x + layer.self_attn.linears[3](att)
            y = self._ln(layer.sublayer[1].norm, x)
            x = x + layer.feed_forward.w_2(torch.relu(layer.feed_forward.w_1(y)))
        if hasattr(self.encoder, "norm"):
            x = self._ln(self.encoder.norm, x)
        s = self.output_layer.w_1(x).squeeze(-1)
        return getattr(torch.nn, self.out_act)()(s) if self.out_act else s


def _inputs(seed=5):
    rng = np.random.default_rng(seed)
    lengths = [6, 3, 9]
    x = torch.zeros((3, 9, F))
    pad = torch.ones((3, 9), dtype=torch.bool)
    for i, n in enumerate(lengths):
        x[i, :n] = torch.tensor(rng.normal(size=(n, F)), dtype=torch.float32)
        pad[i, :n] = False
    return x, pad, lengths


def _ours_padded(trained, x, pad, lengths):
    """ndcglab's scores of the padded lists, through predict with query boundaries."""
    flat = torch.cat([x[i, :n] for i, n in enumerate(lengths)]).numpy()
    b = np.concatenate([[0], np.cumsum(lengths)])
    return trained.predict(flat, group=lengths), b


def _random_state(module, seed=9):
    g = torch.Generator().manual_seed(seed)
    return {k: torch.randn(v.shape, generator=g) * 0.5 for k, v in module.state_dict().items()}


@pytest.mark.parametrize(
    "cfg",
    [
        ALLRANK_MODEL,
        {**ALLRANK_MODEL, "fc_model": {**ALLRANK_MODEL["fc_model"], "sizes": [10, 8],
                                       "activation": "ReLU", "input_norm": True}},
        {**ALLRANK_MODEL, "transformer": None,  # allRank's fully connected scorer (FCModel)
         "fc_model": {"sizes": [10, 6], "input_norm": False, "activation": "Tanh",
                      "dropout": 0.1}, "post_model": {"output_activation": None, "d_output": 1}},
    ],
    ids=["example-config", "relu-input-norm", "fc-only"],
)  # fmt: skip
def test_allrank_models_score_identically_rederived(tmp_path, cfg):
    ref = _RederivedAllRank(F, cfg).eval()
    state = _random_state(ref)
    ref.load_state_dict(state)
    (tmp_path / "config.json").write_text(json.dumps({"model": cfg, "data": {}}))
    torch.save(state, tmp_path / "model.pkl")
    trained = read_allrank(tmp_path / "config.json", tmp_path / "model.pkl")
    x, pad, lengths = _inputs()
    with torch.no_grad():
        want = ref(x, pad)
    got, _ = _ours_padded(trained, x, pad, lengths)
    expected = torch.cat([want[i, :n] for i, n in enumerate(lengths)]).double().numpy()
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)


def _allrank_model_module():
    pytest.importorskip("attr")  # allRank's model module needs attrs (its pinned dependency)
    return pytest.importorskip("allrank.models.model")


@pytest.mark.parametrize("with_transformer", [True, False])
def test_allrank_package_models_score_identically(tmp_path, with_transformer):
    """allRank's own classes (the published package, installed without its pinned deps)."""
    mod = _allrank_model_module()
    from allrank.config import TransformerConfig

    cfg = json.loads(json.dumps(ALLRANK_MODEL))
    tr = cfg["transformer"]
    if not with_transformer:
        cfg["transformer"] = None
        cfg["fc_model"].update(sizes=[10, 6], activation="ReLU", input_norm=True)
    torch.manual_seed(0)
    model = mod.make_model(
        fc_model=dict(cfg["fc_model"], sizes=list(cfg["fc_model"]["sizes"])),
        transformer=TransformerConfig(**tr) if with_transformer else None,
        post_model=cfg["post_model"],
        n_features=F,
    ).eval()
    model.load_state_dict(_random_state(model))  # biases too, not only allRank's Glorot init
    (tmp_path / "config.json").write_text(json.dumps({"model": cfg}))
    torch.save(model.state_dict(), tmp_path / "model.pkl")
    trained = read_allrank(tmp_path / "config.json", tmp_path / "model.pkl")
    x, pad, lengths = _inputs(seed=8)
    with torch.no_grad():
        want = model.score(x, pad, torch.zeros_like(pad, dtype=torch.long))
    got, _ = _ours_padded(trained, x, pad, lengths)
    expected = torch.cat([want[i, :n] for i, n in enumerate(lengths)]).double().numpy()
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)


def test_allrank_models_that_cannot_be_read_are_refused(tmp_path):
    ref = _RederivedAllRank(F, ALLRANK_MODEL)
    state = ref.state_dict()
    positional = {**ALLRANK_MODEL["transformer"], "positional_encoding": {"strategy": "fixed"}}
    with pytest.raises(DataFormatError, match="positional_encoding"):
        read_allrank({"model": {**ALLRANK_MODEL, "transformer": positional}}, state)
    with pytest.raises(DataFormatError, match="d_output"):
        read_allrank(
            {"model": {**ALLRANK_MODEL, "post_model": {"d_output": 2, "output_activation": None}}},
            state,
        )
    with pytest.raises(DataFormatError, match="shape"):
        bad = dict(state)
        bad["output_layer.w_1.weight"] = torch.zeros(1, 5)
        read_allrank({"model": ALLRANK_MODEL}, bad)
    with pytest.raises(DataFormatError, match="unexpected"):
        read_allrank({"model": ALLRANK_MODEL}, {**state, "extra.weight": torch.zeros(1)})


@pytest.fixture()
def allrank_losses(monkeypatch):
    """allRank's loss module; its data loader (torchvision, gcsfs) is not needed for the losses,
    only its padding constant (-1, allrank/data/dataset_loading.py), stubbed here."""
    pytest.importorskip("allrank")
    for name, attrs in (
        ("allrank.data.dataset_loading", {"PADDED_Y_VALUE": -1}),
        ("allrank.models.model_utils", {"get_torch_device": lambda: torch.device("cpu")}),
    ):
        if name not in sys.modules:
            stub = types.ModuleType(name)
            for k, v in attrs.items():
                setattr(stub, k, v)
            monkeypatch.setitem(sys.modules, name, stub)
    for name in [m for m in sys.modules if m.startswith("allrank.models.losses")]:
        monkeypatch.delitem(sys.modules, name)
    import importlib

    return importlib.import_module("allrank.models.losses")


def test_neuralndcg_and_lambdaloss_equal_allranks_on_the_model_scores(allrank_losses):
    model = _model()
    x, pad, lengths = _inputs(seed=11)
    rng = np.random.default_rng(4)
    with torch.no_grad():
        s = model(x, ~pad)
    y = torch.tensor(rng.integers(0, 3, size=s.shape), dtype=torch.float32)
    y[:, 0] = 2.0
    for i, n in enumerate(lengths):
        si, yi = s[i : i + 1, :n], y[i : i + 1, :n]
        mask = torch.ones_like(yi, dtype=torch.bool)
        # allRank returns -NDCG (mean over lists); ndcglab's NeuralNDCG loss is 1 - NDCG
        theirs = 1.0 + allrank_losses.neuralNDCG(si, yi)
        ours = get_loss("neural_ndcg")(si, yi, mask)[0]
        assert abs(float(theirs - ours)) <= 1e-6
        for scheme, name in (("ndcgLoss2_scheme", "ndcg2"), ("ndcgLoss2PP_scheme", "ndcg2pp")):
            for k in (None, 4):
                theirs = allrank_losses.lambdaLoss(si, yi, weighing_scheme=scheme, k=k)
                spec = f"lambdaloss(pairs=both,scheme={name})" + ("" if k is None else f"@{k}")
                ours = get_loss(spec)(si, yi, mask)[0]
                assert abs(float(theirs - ours)) <= 1e-6 * max(1.0, abs(float(ours)))


def _ndcg1_paper(s: list[float], y: list[float], k: int | None) -> tuple[float, float]:
    """Slow loop of Wang et al.'s NDCG-Loss1, −Σ_i log2 Π_{j≠i} (1 + e^{−(s_i − s_j)})^{−G_i/D_i}
    (σ = 1, G_i = (2^{y_i} − 1)/IDCG@k, 1/D_i = 1/log2(1 + π_i) at the current ranking π), over
    the pairs with both documents in the top k (allRank's rule, ``pairs=both``), and NDCG@k(π)."""
    n = len(s)
    kk = n if k is None else min(k, n)
    order = sorted(range(n), key=lambda i: -s[i])
    pos = {d: r + 1 for r, d in enumerate(order)}
    ideal = sorted(y, reverse=True)
    idcg = sum((2.0 ** ideal[r] - 1.0) / math.log2(r + 2.0) for r in range(kk))
    loss, dcg = 0.0, 0.0
    for i in range(n):
        if pos[i] > kk:
            continue
        w = (2.0 ** y[i] - 1.0) / idcg / math.log2(1.0 + pos[i])
        dcg += w
        for j in range(n):
            if j != i and pos[j] <= kk:
                loss -= math.log2((1.0 + math.exp(-(s[i] - s[j]))) ** -w)
    return loss, dcg


def test_allranks_ndcg_loss1_is_ndcglabs_plus_the_ndcg_of_the_current_ranking(allrank_losses):
    """allRank's ``ndcgLoss1_scheme`` keeps the pairs (i, i) (its pair mask for NDCG-Loss1 only
    drops padding): each adds G_i/D_i · log2(1 + e^0) = G_i/D_i, so allRank's value is
    ndcglab's (the paper's product over j ≠ i) plus NDCG@k of the current ranking."""
    g = torch.Generator().manual_seed(43)
    offsets = []
    for n in (3, 6, 9, 14):
        s = torch.randn(1, n, generator=g, dtype=torch.float64) * 1.5
        y = torch.randint(0, 5, (1, n), generator=g).to(torch.float64)
        y[0, 0], y[0, -1] = 3.0, 0.0  # two label levels: a list ndcglab gives a loss
        mask = torch.ones_like(y, dtype=torch.bool)
        for k in (None, 1, 4):
            paper, ndcg = _ndcg1_paper(s[0].tolist(), y[0].tolist(), k)
            spec = "lambdaloss(pairs=both,scheme=ndcg1)" + ("" if k is None else f"@{k}")
            ours = float(get_loss(spec)(s, y, mask)[0])
            assert abs(ours - paper) <= 1e-12 * max(1.0, paper)
            theirs = float(allrank_losses.lambdaLoss(s, y, weighing_scheme="ndcgLoss1_scheme", k=k))
            # allRank forms its discounts in float32: 1e-6
            assert abs(theirs - (ours + ndcg)) <= 1e-6 * max(1.0, theirs)
            offsets.append(theirs - ours)
    assert min(offsets) >= -1e-6 and sum(o > 0.1 for o in offsets) >= 6  # a real offset, not 0


# ---------------------------------------------------------------------- export
@pytest.mark.parametrize("method", ["zscore", "log1p_zscore"])
def test_onnx_and_torchscript_export_equal_predict_on_lists_of_several_lengths(tmp_path, method):
    from ndcglab.data import Normalizer
    from ndcglab.models import TrainedModel, export_model

    rng = np.random.default_rng(6)
    raw = (rng.normal(size=(200, F)) * 5).astype(np.float32)
    trained = TrainedModel(
        model=_model(input_norm=True), normalizer=Normalizer.fit(method, raw), metadata={}
    )
    lengths = [1, 7, 23, 4]
    b = np.concatenate([[0], np.cumsum(lengths)])
    x = raw[: b[-1]]
    want = trained.predict(x, group=lengths)
    padded = np.zeros((len(lengths), 40, F), dtype=np.float32)  # longer than any list
    mask = np.zeros((len(lengths), 40), dtype=bool)
    for i, n in enumerate(lengths):
        padded[i, :n] = x[b[i] : b[i + 1]]
        mask[i, :n] = True
    ts = export_model(trained, tmp_path / "m.pt", format="torchscript")
    with torch.no_grad():
        got = torch.jit.load(str(ts))(torch.as_tensor(padded), torch.as_tensor(mask)).numpy()
    np.testing.assert_allclose(got[mask], want, rtol=1e-5, atol=1e-5)
    assert (got[~mask] == 0).all()
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    path = export_model(trained, tmp_path / "m.onnx", format="onnx")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    meta = session.get_modelmeta().custom_metadata_map
    assert json.loads(meta["mask_input"])["name"] == "mask"
    for width in (23, 40):  # two padded lengths, the same scores
        out = session.run(None, {"features": padded[:, :width], "mask": mask[:, :width]})[0]
        np.testing.assert_allclose(out[mask[:, :width]], want, rtol=1e-5, atol=1e-5)
    # one list alone, at its own length
    one = session.run(None, {"features": padded[2:3, :23], "mask": mask[2:3, :23]})[0][0]
    np.testing.assert_allclose(one, want[b[2] : b[3]], rtol=1e-5, atol=1e-5)
