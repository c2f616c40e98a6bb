#!/usr/bin/python3
"""Writes models/zoo/*.json: the DNN model zoo of ddlsim, derived layer by layer from each
architecture (no framework needed). Run from anywhere: /usr/bin/python3 scripts/gen_zoo.py

Every layer (or parameter-free operation that costs time) in forward order, which is the
registration order of the parameters in the reference implementation named in "source":
  parameters        trainable parameters of the layer (weights + biases; BN/LN gamma + beta)
  forward_flops     floating-point operations per sample in the forward pass (2 per multiply-add)
  backward_flops    per sample in the backward pass: 2x forward for layers with weights (input
                    gradient + weight gradient), 1x for parameter-free operations
  activation_bytes  bytes of the layer's output per sample in fp32 (4 bytes per element)
Kinds: conv, linear, attention (the parameter-free score and context matmuls), norm,
embedding, pool, elementwise. A layer with "model_parallel": true is sharded across GPUs (its
gradient is not all-reduced; its output is exchanged by all-to-all), as DLRM's embeddings.
The totals are checked against the published parameter counts below before anything is written.
"""
import json
import os
import sys

ZOO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "zoo")


class Net:
    def __init__(self):
        self.layers = []

    def add(self, name, kind, params, fwd, act_elems, bwd=None, **extra):
        if bwd is None:
            bwd = 2 * fwd if params > 0 else fwd
        layer = {"name": name, "kind": kind, "parameters": int(params),
                 "forward_flops": int(fwd), "backward_flops": int(bwd),
                 "activation_bytes": int(act_elems) * 4}
        layer.update(extra)
        self.layers.append(layer)

    # --- CNN building blocks (NCHW, per sample) ---
    def conv(self, name, cin, cout, kh, kw, h_out, w_out, bias=False):
        params = cin * cout * kh * kw + (cout if bias else 0)
        fwd = 2 * cin * kh * kw * cout * h_out * w_out
        self.add(name, "conv", params, fwd, cout * h_out * w_out)

    def bn(self, name, c, h, w):
        # normalise + scale + shift: ~5 operations per element; memory-bound in practice
        self.add(name, "norm", 2 * c, 5 * c * h * w, c * h * w)

    def pool(self, name, c, h_out, w_out, k):
        self.add(name, "pool", 0, c * h_out * w_out * k * k, c * h_out * w_out)

    def linear(self, name, fin, fout, tokens=1, bias=True, kind="linear"):
        params = fin * fout + (fout if bias else 0)
        self.add(name, kind, params, 2 * fin * fout * tokens, fout * tokens)

    def total(self):
        return sum(layer["parameters"] for layer in self.layers)


def out_size(size, k, s=1, p=0):
    return (size + 2 * p - k) // s + 1


def alexnet():
    n = Net()
    n.conv("features.0", 3, 64, 11, 11, 55, 55, bias=True)
    n.pool("features.2", 64, 27, 27, 3)
    n.conv("features.3", 64, 192, 5, 5, 27, 27, bias=True)
    n.pool("features.5", 192, 13, 13, 3)
    n.conv("features.6", 192, 384, 3, 3, 13, 13, bias=True)
    n.conv("features.8", 384, 256, 3, 3, 13, 13, bias=True)
    n.conv("features.10", 256, 256, 3, 3, 13, 13, bias=True)
    n.pool("features.12", 256, 6, 6, 3)
    n.linear("classifier.1", 9216, 4096)
    n.linear("classifier.4", 4096, 4096)
    n.linear("classifier.6", 4096, 1000)
    return n


def vgg16():
    n = Net()
    cfg = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]
    cin, size, idx = 3, 224, 0
    for v in cfg:
        if v == "M":
            size //= 2
            n.pool(f"features.{idx}", cin, size, size, 2)
            idx += 1
        else:
            n.conv(f"features.{idx}", cin, v, 3, 3, size, size, bias=True)
            cin = v
            idx += 2
    n.linear("classifier.0", 512 * 7 * 7, 4096)
    n.linear("classifier.3", 4096, 4096)
    n.linear("classifier.6", 4096, 1000)
    return n


def resnet(blocks):
    """torchvision ResNet v1.5 (stride in the 3x3 conv of each bottleneck)."""
    n = Net()
    n.conv("conv1", 3, 64, 7, 7, 112, 112)
    n.bn("bn1", 64, 112, 112)
    n.pool("maxpool", 64, 56, 56, 3)
    cin, size = 64, 56
    for stage, (count, width) in enumerate(zip(blocks, [64, 128, 256, 512])):
        for b in range(count):
            stride = 2 if (b == 0 and stage > 0) else 1
            out = size // stride
            p = f"layer{stage + 1}.{b}"
            n.conv(p + ".conv1", cin, width, 1, 1, size, size)
            n.bn(p + ".bn1", width, size, size)
            n.conv(p + ".conv2", width, width, 3, 3, out, out)
            n.bn(p + ".bn2", width, out, out)
            n.conv(p + ".conv3", width, width * 4, 1, 1, out, out)
            n.bn(p + ".bn3", width * 4, out, out)
            if b == 0:
                n.conv(p + ".downsample.0", cin, width * 4, 1, 1, out, out)
                n.bn(p + ".downsample.1", width * 4, out, out)
            n.add(p + ".add_relu", "elementwise", 0, 2 * width * 4 * out * out, width * 4 * out * out)
            cin, size = width * 4, out
    n.pool("avgpool", 2048, 1, 1, 7)
    n.linear("fc", 2048, 1000)
    return n


def inception_v3():
    """torchvision Inception3 with the auxiliary classifier (aux_logits=True, the default)."""
    n = Net()

    def basic(name, cin, cout, kh, kw, h, w):  # BasicConv2d: conv (no bias) + BN (eps 0.001)
        n.conv(name + ".conv", cin, cout, kh, kw, h, w)
        n.bn(name + ".bn", cout, h, w)

    def mixed_a(p, cin, pool_features, s):
        basic(p + ".branch1x1", cin, 64, 1, 1, s, s)
        basic(p + ".branch5x5_1", cin, 48, 1, 1, s, s)
        basic(p + ".branch5x5_2", 48, 64, 5, 5, s, s)
        basic(p + ".branch3x3dbl_1", cin, 64, 1, 1, s, s)
        basic(p + ".branch3x3dbl_2", 64, 96, 3, 3, s, s)
        basic(p + ".branch3x3dbl_3", 96, 96, 3, 3, s, s)
        n.pool(p + ".avg_pool", cin, s, s, 3)
        basic(p + ".branch_pool", cin, pool_features, 1, 1, s, s)
        return 64 + 64 + 96 + pool_features

    def mixed_b(p, cin, s):
        o = out_size(s, 3, 2)
        basic(p + ".branch3x3", cin, 384, 3, 3, o, o)
        basic(p + ".branch3x3dbl_1", cin, 64, 1, 1, s, s)
        basic(p + ".branch3x3dbl_2", 64, 96, 3, 3, s, s)
        basic(p + ".branch3x3dbl_3", 96, 96, 3, 3, o, o)
        n.pool(p + ".max_pool", cin, o, o, 3)
        return 384 + 96 + cin, o

    def mixed_c(p, cin, c7, s):
        basic(p + ".branch1x1", cin, 192, 1, 1, s, s)
        basic(p + ".branch7x7_1", cin, c7, 1, 1, s, s)
        basic(p + ".branch7x7_2", c7, c7, 1, 7, s, s)
        basic(p + ".branch7x7_3", c7, 192, 7, 1, s, s)
        basic(p + ".branch7x7dbl_1", cin, c7, 1, 1, s, s)
        basic(p + ".branch7x7dbl_2", c7, c7, 7, 1, s, s)
        basic(p + ".branch7x7dbl_3", c7, c7, 1, 7, s, s)
        basic(p + ".branch7x7dbl_4", c7, c7, 7, 1, s, s)
        basic(p + ".branch7x7dbl_5", c7, 192, 1, 7, s, s)
        n.pool(p + ".avg_pool", cin, s, s, 3)
        basic(p + ".branch_pool", cin, 192, 1, 1, s, s)
        return 768

    def mixed_d(p, cin, s):
        o = out_size(s, 3, 2)
        basic(p + ".branch3x3_1", cin, 192, 1, 1, s, s)
        basic(p + ".branch3x3_2", 192, 320, 3, 3, o, o)
        basic(p + ".branch7x7x3_1", cin, 192, 1, 1, s, s)
        basic(p + ".branch7x7x3_2", 192, 192, 1, 7, s, s)
        basic(p + ".branch7x7x3_3", 192, 192, 7, 1, s, s)
        basic(p + ".branch7x7x3_4", 192, 192, 3, 3, o, o)
        n.pool(p + ".max_pool", cin, o, o, 3)
        return 320 + 192 + cin, o

    def mixed_e(p, cin, s):
        basic(p + ".branch1x1", cin, 320, 1, 1, s, s)
        basic(p + ".branch3x3_1", cin, 384, 1, 1, s, s)
        basic(p + ".branch3x3_2a", 384, 384, 1, 3, s, s)
        basic(p + ".branch3x3_2b", 384, 384, 3, 1, s, s)
        basic(p + ".branch3x3dbl_1", cin, 448, 1, 1, s, s)
        basic(p + ".branch3x3dbl_2", 448, 384, 3, 3, s, s)
        basic(p + ".branch3x3dbl_3a", 384, 384, 1, 3, s, s)
        basic(p + ".branch3x3dbl_3b", 384, 384, 3, 1, s, s)
        n.pool(p + ".avg_pool", cin, s, s, 3)
        basic(p + ".branch_pool", cin, 192, 1, 1, s, s)
        return 320 + 768 + 768 + 192

    basic("Conv2d_1a_3x3", 3, 32, 3, 3, 149, 149)
    basic("Conv2d_2a_3x3", 32, 32, 3, 3, 147, 147)
    basic("Conv2d_2b_3x3", 32, 64, 3, 3, 147, 147)
    n.pool("maxpool1", 64, 73, 73, 3)
    basic("Conv2d_3b_1x1", 64, 80, 1, 1, 73, 73)
    basic("Conv2d_4a_3x3", 80, 192, 3, 3, 71, 71)
    n.pool("maxpool2", 192, 35, 35, 3)
    c = mixed_a("Mixed_5b", 192, 32, 35)
    c = mixed_a("Mixed_5c", c, 64, 35)
    c = mixed_a("Mixed_5d", c, 64, 35)
    c, s = mixed_b("Mixed_6a", c, 35)
    for name, c7 in (("Mixed_6b", 128), ("Mixed_6c", 160), ("Mixed_6d", 160), ("Mixed_6e", 192)):
        c = mixed_c(name, c, c7, s)
    # AuxLogits (registered and run in training between Mixed_6e and Mixed_7a): 17 -> avgpool 5/3 -> 5
    n.pool("AuxLogits.avg_pool", 768, 5, 5, 5)
    basic("AuxLogits.conv0", 768, 128, 1, 1, 5, 5)
    basic("AuxLogits.conv1", 128, 768, 5, 5, 1, 1)
    n.linear("AuxLogits.fc", 768, 1000)
    c, s = mixed_d("Mixed_7a", c, s)
    c = mixed_e("Mixed_7b", c, s)
    c = mixed_e("Mixed_7c", c, s)
    n.pool("avgpool", 2048, 1, 1, 8)
    n.linear("fc", 2048, 1000)
    return n


def encoder_layer(n, p, d, ff, seq, heads, names):
    """One post-LN Transformer encoder layer over `seq` tokens."""
    q, k, v, o, ln1, fc1, fc2, ln2 = names
    for name in (q, k, v):
        n.linear(p + name, d, d, seq)
    attention(n, p, d, seq, seq, heads)
    n.linear(p + o, d, d, seq)
    layer_norm(n, p + ln1, d, seq)
    n.linear(p + fc1, d, ff, seq)
    n.add(p + fc1 + ".gelu", "elementwise", 0, 8 * ff * seq, ff * seq)
    n.linear(p + fc2, ff, d, seq)
    layer_norm(n, p + ln2, d, seq)


def attention(n, p, d, seq_q, seq_k, heads, name="attention.scores"):
    # QK^T and softmax(.)V: 2 matmuls of seq_q x seq_k x d multiply-adds each
    n.add(p + name, "attention", 0, 4 * seq_q * seq_k * d + 5 * heads * seq_q * seq_k,
          heads * seq_q * seq_k + seq_q * d)


def layer_norm(n, name, d, tokens):
    n.add(name, "norm", 2 * d, 8 * d * tokens, d * tokens)


def bert(layers, d, heads, seq=128, vocab=30522):
    """Hugging Face BertModel (bert-*-uncased) with the pooler, no pre-training heads."""
    n = Net()
    n.add("embeddings.word_embeddings", "embedding", vocab * d, 0, d * seq)
    n.add("embeddings.position_embeddings", "embedding", 512 * d, 0, d * seq)
    n.add("embeddings.token_type_embeddings", "embedding", 2 * d, 2 * d * seq, d * seq)
    layer_norm(n, "embeddings.LayerNorm", d, seq)
    names = ("attention.self.query", "attention.self.key", "attention.self.value",
             "attention.output.dense", "attention.output.LayerNorm", "intermediate.dense",
             "output.dense", "output.LayerNorm")
    for i in range(layers):
        encoder_layer(n, f"encoder.layer.{i}.", d, 4 * d, seq, heads, names)
    n.linear("pooler.dense", d, d, 1)
    return n


def gpt2_medium(seq=1024):
    """Hugging Face GPT2Model (gpt2-medium): lm_head tied to wte, so counted once."""
    n, d, vocab = Net(), 1024, 50257
    n.add("wte", "embedding", vocab * d, 0, d * seq)
    n.add("wpe", "embedding", 1024 * d, d * seq, d * seq)
    for i in range(24):
        p = f"h.{i}."
        layer_norm(n, p + "ln_1", d, seq)
        n.linear(p + "attn.c_attn", d, 3 * d, seq)
        attention(n, p, d, seq, seq, 16, "attn.scores")
        n.linear(p + "attn.c_proj", d, d, seq)
        layer_norm(n, p + "ln_2", d, seq)
        n.linear(p + "mlp.c_fc", d, 4 * d, seq)
        n.add(p + "mlp.gelu", "elementwise", 0, 8 * 4 * d * seq, 4 * d * seq)
        n.linear(p + "mlp.c_proj", 4 * d, d, seq)
    layer_norm(n, "ln_f", d, seq)
    # the language-model head reuses wte's weights: its time counts, its parameters do not
    n.add("lm_head (tied to wte)", "linear", 0, 2 * d * vocab * seq, vocab * seq,
          bwd=4 * d * vocab * seq)
    return n


def transformer_base(src=32, tgt=32, vocab=37000):
    """Vaswani et al. 2017 base model (d=512, ff=2048, 8 heads, 6+6 layers, post-LN), source,
    target and pre-softmax weights shared over a joint BPE vocabulary of 37,000 (WMT14 en-de)."""
    n, d, ff, h = Net(), 512, 2048, 8
    n.add("embed_tokens (shared)", "embedding", vocab * d, 0, d * (src + tgt))
    enc = ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.out_proj",
           "self_attn_layer_norm", "fc1", "fc2", "final_layer_norm")
    for i in range(6):
        encoder_layer(n, f"encoder.layers.{i}.", d, ff, src, h, enc)
    for i in range(6):
        p = f"decoder.layers.{i}."
        for name in ("q_proj", "k_proj", "v_proj"):
            n.linear(p + "self_attn." + name, d, d, tgt)
        attention(n, p, d, tgt, tgt, h, "self_attn.scores")
        n.linear(p + "self_attn.out_proj", d, d, tgt)
        layer_norm(n, p + "self_attn_layer_norm", d, tgt)
        n.linear(p + "encoder_attn.q_proj", d, d, tgt)
        n.linear(p + "encoder_attn.k_proj", d, d, src)
        n.linear(p + "encoder_attn.v_proj", d, d, src)
        attention(n, p, d, tgt, src, h, "encoder_attn.scores")
        n.linear(p + "encoder_attn.out_proj", d, d, tgt)
        layer_norm(n, p + "encoder_attn_layer_norm", d, tgt)
        n.linear(p + "fc1", d, ff, tgt)
        n.add(p + "relu", "elementwise", 0, ff * tgt, ff * tgt)
        n.linear(p + "fc2", ff, d, tgt)
        layer_norm(n, p + "final_layer_norm", d, tgt)
    n.add("output_projection (tied)", "linear", 0, 2 * d * vocab * tgt, vocab * tgt,
          bwd=4 * d * vocab * tgt)
    return n


CRITEO_KAGGLE_ROWS = [1460, 583, 10131227, 2202608, 305, 24, 12517, 633, 3, 93145, 5683, 8351593,
                      3194, 27, 14992, 5461306, 10, 5652, 2173, 4, 7046547, 18, 15, 286181, 105,
                      142572]


def dlrm():
    """facebookresearch/dlrm, Criteo Kaggle configuration: --arch-sparse-feature-size=16
    --arch-mlp-bot=13-512-256-64-16 --arch-mlp-top=512-256-1, dot interaction."""
    n, dim = Net(), 16
    bottom = [13, 512, 256, 64, 16]
    for i in range(len(bottom) - 1):
        n.linear(f"bot_l.{2 * i}", bottom[i], bottom[i + 1])
    for t, rows in enumerate(CRITEO_KAGGLE_ROWS):
        # a lookup reads one row; the backward pass writes one row's gradient
        n.add(f"emb_l.{t}", "embedding", rows * dim, 0, dim, bwd=dim, model_parallel=True)
    vectors = len(CRITEO_KAGGLE_ROWS) + 1
    pairs = vectors * (vectors - 1) // 2
    n.add("interaction", "elementwise", 0, 2 * pairs * dim, pairs + dim)
    top = [pairs + dim, 512, 256, 1]
    for i in range(len(top) - 1):
        n.linear(f"top_l.{2 * i}", top[i], top[i + 1])
    return n


MODELS = [
    ("alexnet", alexnet, 61100840, "torchvision.models.alexnet (224x224 input)",
     "torchvision", "one 224x224x3 image"),
    ("vgg16", vgg16, 138357544, "torchvision.models.vgg16 (Simonyan & Zisserman 2015)",
     "torchvision", "one 224x224x3 image"),
    ("resnet50", lambda: resnet([3, 4, 6, 3]), 25557032,
     "torchvision.models.resnet50, v1.5 (He et al. 2016; stride in the 3x3 conv)", "torchvision",
     "one 224x224x3 image"),
    ("resnet101", lambda: resnet([3, 4, 23, 3]), 44549160, "torchvision.models.resnet101, v1.5",
     "torchvision", "one 224x224x3 image"),
    ("inception_v3", inception_v3, 27161264,
     "torchvision.models.inception_v3 with aux_logits=True (Szegedy et al. 2016)", "torchvision",
     "one 299x299x3 image"),
    ("bert_base", lambda: bert(12, 768, 12), 109482240,
     "Hugging Face bert-base-uncased, BertModel with pooler (Devlin et al. 2019)",
     "BertModel parameters including the pooler, excluding the pre-training heads",
     "one sequence of 128 tokens"),
    ("bert_large", lambda: bert(24, 1024, 16), 335141888,
     "Hugging Face bert-large-uncased, BertModel with pooler (Devlin et al. 2019)",
     "BertModel parameters including the pooler, excluding the pre-training heads",
     "one sequence of 128 tokens"),
    ("transformer_base", transformer_base, 63082496,
     "Vaswani et al. 2017, Transformer base (WMT14 en-de, shared 37k BPE vocabulary)",
     "derived here: shared source/target/softmax embedding, no bias on the output projection; "
     "the paper rounds it to 65M",
     "one sentence pair of 32 source and 32 target tokens"),
    ("gpt2_medium", gpt2_medium, 354823168,
     "Hugging Face gpt2-medium, GPT2Model (Radford et al. 2019)",
     "GPT2Model parameters; the language-model head is tied to wte and counted once",
     "one sequence of 1024 tokens"),
    ("dlrm", dlrm, 540677217,
     "facebookresearch/dlrm, Criteo Kaggle configuration (Naumov et al. 2019); table sizes from "
     "the Criteo Kaggle display-advertising data set",
     "derived here: 26 embedding tables of dimension 16 (model parallel, exchanged by "
     "all-to-all) plus the bottom and top MLPs (data parallel)",
     "one click record (13 dense and 26 categorical features)"),
]


def main():
    os.makedirs(ZOO, exist_ok=True)
    failed = False
    for name, build, published, source, convention, sample in MODELS:
        net = build()
        total = net.total()
        if total != published:
            print(f"{name}: derived {total:,} parameters, published {published:,}", file=sys.stderr)
            failed = True
            continue
        doc = {"name": name, "source": source, "convention": convention, "sample": sample,
               "total_parameters": published, "layers": net.layers}
        with open(os.path.join(ZOO, name + ".json"), "w") as out:
            out.write("{\n")
            for key in ("name", "source", "convention", "sample", "total_parameters"):
                out.write(f"  {json.dumps(key)}: {json.dumps(doc[key])},\n")
            out.write('  "layers": [\n')
            out.write(",\n".join("    " + json.dumps(layer) for layer in net.layers))
            out.write("\n  ]\n}\n")
        fwd = sum(layer["forward_flops"] for layer in net.layers)
        print(f"{name}: {len(net.layers)} layers, {total:,} parameters, {fwd / 1e9:.2f} GFLOP "
              "forward per sample")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
