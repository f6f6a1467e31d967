package llm

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/agnivade/levenshtein"
)

// Model is the shape of a decoder-only transformer, as far as serving memory
// and decode speed depend on it.
type Model struct {
	// Name is the canonical name, e.g. "Llama-3.1-8B".
	Name string `json:"name"`
	// Aliases are other names Lookup accepts (Hugging Face repository names,
	// instruct variants, spellings with spaces or dots).
	Aliases []string `json:"aliases,omitempty"`
	// Params is the total parameter count: every weight held in GPU memory.
	Params float64 `json:"params"`
	// ActiveParams is the parameter count one token's forward pass reads; it
	// equals Params for a dense model and is smaller for a mixture of experts.
	ActiveParams float64 `json:"activeParams"`
	Layers       int     `json:"layers"`
	Hidden       int     `json:"hidden"`
	Heads        int     `json:"heads"`
	// KVHeads is the number of key/value heads (fewer than Heads under
	// grouped-query attention).
	KVHeads int `json:"kvHeads"`
	HeadDim int `json:"headDim"`
	// KVLatentDim is, for multi-head latent attention (MLA, DeepSeek-V3), the
	// number of elements cached per token and layer: the compressed KV latent
	// plus the decoupled RoPE key. Zero for ordinary attention, whose cache
	// holds a key and a value per KV head.
	KVLatentDim int `json:"kvLatentDim,omitempty"`
	// Experts and ExpertsPerToken describe a mixture of experts: routed
	// experts per layer and how many of them each token uses (config.json's
	// num_local_experts or n_routed_experts, and num_experts_per_tok). Zero
	// for a dense model.
	Experts         int `json:"experts,omitempty"`
	ExpertsPerToken int `json:"expertsPerToken,omitempty"`
	// MaxContext is the longest context the model's config supports, in tokens.
	MaxContext int `json:"maxContext"`
	// Source names the public config and model card the figures come from.
	Source string `json:"source"`
	// Estimated is true when the shape (layers, heads, head size) is borrowed
	// from the known model nearest in size, for a model given only by its
	// parameter count; the KV cache figure is then an estimate.
	Estimated bool `json:"estimated,omitempty"`
	// ShapeFrom names the model whose shape an estimated model borrows.
	ShapeFrom string `json:"shapeFrom,omitempty"`
}

// MoE reports whether the model is a mixture of experts (reads fewer weights
// per token than it holds).
func (m Model) MoE() bool { return m.ActiveParams > 0 && m.ActiveParams < m.Params }

// ParamsReadPerStep is how many parameters one decode step reads for a batch
// of sequences. A dense model reads all of them. A mixture of experts reads
// its shared parameters S and each expert any token of the batch is routed
// to; with E experts of X parameters, k per token, routing taken as uniform
// and independent, a batch of B touches E × (1 − (1 − k/E)^B) experts on
// average. S and X follow from the totals: X = (total − active) / (E − k),
// S = active − k × X. For B = 1 this is the active parameter count.
func (m Model) ParamsReadPerStep(batch int) float64 {
	if !m.MoE() || m.Experts <= m.ExpertsPerToken || m.ExpertsPerToken <= 0 || batch <= 1 {
		return m.ActiveParams
	}
	e, k := float64(m.Experts), float64(m.ExpertsPerToken)
	perExpert := (m.Params - m.ActiveParams) / (e - k)
	shared := m.ActiveParams - k*perExpert
	touched := e * (1 - math.Pow(1-k/e, float64(batch)))
	return shared + touched*perExpert
}

// KVElementsPerToken is how many values the KV cache holds per token, summed
// over all layers: 2 × layers × KV heads × head size, or layers × latent size
// under multi-head latent attention.
func (m Model) KVElementsPerToken() int {
	if m.KVLatentDim > 0 {
		return m.Layers * m.KVLatentDim
	}
	return 2 * m.Layers * m.KVHeads * m.HeadDim
}

// kvShards is how many tensor-parallel ranks can split the KV cache without
// copying it: the KV heads, or 1 for a latent cache every rank needs whole.
func (m Model) kvShards() int {
	if m.KVLatentDim > 0 {
		return 1
	}
	return m.KVHeads
}

// models is the table of known models. Shapes come from each model's public
// config.json on Hugging Face (num_hidden_layers, hidden_size,
// num_attention_heads, num_key_value_heads, head_dim or hidden/heads,
// max_position_embeddings); parameter counts from the model card or the
// repository's safetensors total, as named in Source.
var models = []Model{
	{
		Name: "Llama-3.2-1B", Aliases: []string{"meta-llama/Llama-3.2-1B", "meta-llama/Llama-3.2-1B-Instruct", "llama3.2-1b"},
		Params: 1.23e9, Layers: 16, Hidden: 2048, Heads: 32, KVHeads: 8, HeadDim: 64, MaxContext: 131072,
		Source: "huggingface.co/meta-llama/Llama-3.2-1B config.json; model card (1.23B)",
	},
	{
		Name: "Llama-3.2-3B", Aliases: []string{"meta-llama/Llama-3.2-3B", "meta-llama/Llama-3.2-3B-Instruct", "llama3.2-3b"},
		Params: 3.21e9, Layers: 28, Hidden: 3072, Heads: 24, KVHeads: 8, HeadDim: 128, MaxContext: 131072,
		Source: "huggingface.co/meta-llama/Llama-3.2-3B config.json; model card (3.21B)",
	},
	{
		Name: "Llama-3.1-8B", Aliases: []string{"meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Meta-Llama-3.1-8B-Instruct", "llama3.1-8b"},
		Params: 8.03e9, Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, MaxContext: 131072,
		Source: "huggingface.co/meta-llama/Llama-3.1-8B config.json; safetensors total (8.03B)",
	},
	{
		Name: "Llama-3.1-70B", Aliases: []string{"meta-llama/Llama-3.1-70B", "meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Meta-Llama-3.1-70B-Instruct", "llama3.1-70b"},
		Params: 70.6e9, Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, HeadDim: 128, MaxContext: 131072,
		Source: "huggingface.co/meta-llama/Llama-3.1-70B config.json; safetensors total (70.6B)",
	},
	{
		Name: "Llama-3.3-70B", Aliases: []string{"meta-llama/Llama-3.3-70B-Instruct", "llama3.3-70b"},
		Params: 70.6e9, Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, HeadDim: 128, MaxContext: 131072,
		Source: "huggingface.co/meta-llama/Llama-3.3-70B-Instruct config.json; safetensors total (70.6B)",
	},
	{
		Name: "Llama-3.1-405B", Aliases: []string{"meta-llama/Llama-3.1-405B", "meta-llama/Llama-3.1-405B-Instruct", "meta-llama/Meta-Llama-3.1-405B-Instruct", "llama3.1-405b"},
		Params: 405.9e9, Layers: 126, Hidden: 16384, Heads: 128, KVHeads: 8, HeadDim: 128, MaxContext: 131072,
		Source: "huggingface.co/meta-llama/Llama-3.1-405B config.json; safetensors total (405.9B)",
	},
	{
		Name: "Mistral-7B", Aliases: []string{"mistralai/Mistral-7B-v0.3", "mistralai/Mistral-7B-Instruct-v0.3", "mistral-7b-v0.3", "mistral-7b-v0.2"},
		Params: 7.25e9, Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, MaxContext: 32768,
		Source: "huggingface.co/mistralai/Mistral-7B-v0.3 config.json; safetensors total (7.25B)",
	},
	{
		Name: "Mixtral-8x7B", Aliases: []string{"mistralai/Mixtral-8x7B-v0.1", "mistralai/Mixtral-8x7B-Instruct-v0.1"},
		Params: 46.7e9, ActiveParams: 12.9e9, Experts: 8, ExpertsPerToken: 2, Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, MaxContext: 32768,
		Source: "huggingface.co/mistralai/Mixtral-8x7B-v0.1 config.json (8 experts, 2 per token); mistral.ai announcement (46.7B total, 12.9B active)",
	},
	{
		Name: "Mixtral-8x22B", Aliases: []string{"mistralai/Mixtral-8x22B-v0.1", "mistralai/Mixtral-8x22B-Instruct-v0.1"},
		Params: 141e9, ActiveParams: 39e9, Experts: 8, ExpertsPerToken: 2, Layers: 56, Hidden: 6144, Heads: 48, KVHeads: 8, HeadDim: 128, MaxContext: 65536,
		Source: "huggingface.co/mistralai/Mixtral-8x22B-v0.1 config.json (8 experts, 2 per token); mistral.ai announcement (141B total, 39B active)",
	},
	{
		Name: "Qwen2.5-7B", Aliases: []string{"Qwen/Qwen2.5-7B", "Qwen/Qwen2.5-7B-Instruct", "qwen-2.5-7b"},
		Params: 7.61e9, Layers: 28, Hidden: 3584, Heads: 28, KVHeads: 4, HeadDim: 128, MaxContext: 131072,
		Source: "huggingface.co/Qwen/Qwen2.5-7B-Instruct config.json; model card (7.61B, 131,072 tokens with YaRN)",
	},
	{
		Name: "Qwen2.5-14B", Aliases: []string{"Qwen/Qwen2.5-14B", "Qwen/Qwen2.5-14B-Instruct", "qwen-2.5-14b"},
		Params: 14.7e9, Layers: 48, Hidden: 5120, Heads: 40, KVHeads: 8, HeadDim: 128, MaxContext: 131072,
		Source: "huggingface.co/Qwen/Qwen2.5-14B-Instruct config.json; model card (14.7B, 131,072 tokens with YaRN)",
	},
	{
		Name: "Qwen2.5-32B", Aliases: []string{"Qwen/Qwen2.5-32B", "Qwen/Qwen2.5-32B-Instruct", "qwen-2.5-32b"},
		Params: 32.5e9, Layers: 64, Hidden: 5120, Heads: 40, KVHeads: 8, HeadDim: 128, MaxContext: 131072,
		Source: "huggingface.co/Qwen/Qwen2.5-32B-Instruct config.json; model card (32.5B, 131,072 tokens with YaRN)",
	},
	{
		Name: "Qwen2.5-72B", Aliases: []string{"Qwen/Qwen2.5-72B", "Qwen/Qwen2.5-72B-Instruct", "qwen-2.5-72b"},
		Params: 72.7e9, Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, HeadDim: 128, MaxContext: 131072,
		Source: "huggingface.co/Qwen/Qwen2.5-72B-Instruct config.json; model card (72.7B, 131,072 tokens with YaRN)",
	},
	{
		Name: "Gemma-2-2B", Aliases: []string{"google/gemma-2-2b", "google/gemma-2-2b-it", "gemma2-2b"},
		Params: 2.61e9, Layers: 26, Hidden: 2304, Heads: 8, KVHeads: 4, HeadDim: 256, MaxContext: 8192,
		Source: "huggingface.co/google/gemma-2-2b config.json; model card (2.61B)",
	},
	{
		Name: "Gemma-2-9B", Aliases: []string{"google/gemma-2-9b", "google/gemma-2-9b-it", "gemma2-9b"},
		Params: 9.24e9, Layers: 42, Hidden: 3584, Heads: 16, KVHeads: 8, HeadDim: 256, MaxContext: 8192,
		Source: "huggingface.co/google/gemma-2-9b config.json; safetensors total (9.24B)",
	},
	{
		Name: "Gemma-2-27B", Aliases: []string{"google/gemma-2-27b", "google/gemma-2-27b-it", "gemma2-27b"},
		Params: 27.2e9, Layers: 46, Hidden: 4608, Heads: 32, KVHeads: 16, HeadDim: 128, MaxContext: 8192,
		Source: "huggingface.co/google/gemma-2-27b config.json; safetensors total (27.2B)",
	},
	{
		Name: "DeepSeek-V3", Aliases: []string{"deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-V3-0324", "deepseek-ai/DeepSeek-V3-Base", "deepseek-v3-0324"},
		Params: 671e9, ActiveParams: 37e9, Experts: 256, ExpertsPerToken: 8, Layers: 61, Hidden: 7168, Heads: 128, KVHeads: 128, HeadDim: 128,
		KVLatentDim: 512 + 64, MaxContext: 163840,
		Source: "huggingface.co/deepseek-ai/DeepSeek-V3 config.json (kv_lora_rank 512, qk_rope_head_dim 64, 256 routed experts, 8 per token); model card (671B total without the 14B MTP module, 37B active)",
	},
	{
		Name: "DeepSeek-R1", Aliases: []string{"deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-R1-0528", "deepseek-r1-0528"},
		Params: 671e9, ActiveParams: 37e9, Experts: 256, ExpertsPerToken: 8, Layers: 61, Hidden: 7168, Heads: 128, KVHeads: 128, HeadDim: 128,
		KVLatentDim: 512 + 64, MaxContext: 163840,
		Source: "huggingface.co/deepseek-ai/DeepSeek-R1 config.json (DeepSeek-V3 architecture: 256 routed experts, 8 per token); model card (671B total, 37B active)",
	},
	{
		Name: "Phi-3-mini", Aliases: []string{"microsoft/Phi-3-mini-4k-instruct", "microsoft/Phi-3-mini-128k-instruct", "phi-3-mini-4k", "phi-3-mini-128k", "phi3-mini"},
		Params: 3.82e9, Layers: 32, Hidden: 3072, Heads: 32, KVHeads: 32, HeadDim: 96, MaxContext: 131072,
		Source: "huggingface.co/microsoft/Phi-3-mini-128k-instruct config.json; model card (3.8B; the 4k variant has the same shape and 4,096 tokens)",
	},
	{
		Name: "Phi-3-medium", Aliases: []string{"microsoft/Phi-3-medium-4k-instruct", "microsoft/Phi-3-medium-128k-instruct", "phi-3-medium-4k", "phi-3-medium-128k", "phi3-medium"},
		Params: 14e9, Layers: 40, Hidden: 5120, Heads: 40, KVHeads: 10, HeadDim: 128, MaxContext: 131072,
		Source: "huggingface.co/microsoft/Phi-3-medium-128k-instruct config.json; model card (14B; the 4k variant has the same shape and 4,096 tokens)",
	},
}

// index maps every normalized name and alias to its row in models. Building
// it also sets ActiveParams = Params for the dense rows, which leave it out.
var index = func() map[string]int {
	ix := map[string]int{}
	for i := range models {
		if models[i].ActiveParams == 0 {
			models[i].ActiveParams = models[i].Params
		}
		for _, n := range append([]string{models[i].Name}, models[i].Aliases...) {
			ix[normalize(n)] = i
		}
	}
	return ix
}()

// normalize folds a model name for lookup: lower case, no organisation
// prefix, no "instruct"/"it"/"chat"/"hf"/"base" words, no separators. So
// "meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b" and "Llama 3.1 8B" meet.
func normalize(name string) string {
	s := strings.ToLower(strings.TrimSpace(name))
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	words := strings.FieldsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	var b strings.Builder
	for _, w := range words {
		switch w {
		case "instruct", "it", "chat", "hf", "base":
			continue
		}
		b.WriteString(w)
	}
	return b.String()
}

// Lookup finds a known model by name or alias, case-insensitively and
// ignoring separators, organisation prefixes and instruct/chat suffixes.
func Lookup(name string) (Model, bool) {
	i, ok := index[normalize(name)]
	if !ok {
		return Model{}, false
	}
	return clone(models[i]), true
}

// Models lists the known models in table order.
func Models() []Model {
	out := make([]Model, len(models))
	for i, m := range models {
		out[i] = clone(m)
	}
	return out
}

func clone(m Model) Model {
	m.Aliases = slices.Clone(m.Aliases)
	return m
}

// Suggest returns up to three known model names close to an unknown name,
// closest first; none when nothing is close.
func Suggest(name string) []string {
	q := normalize(name)
	if q == "" {
		return nil
	}
	type cand struct {
		name string
		dist int
		row  int
	}
	best := map[string]cand{}
	for key, row := range index {
		d := levenshtein.ComputeDistance(q, key)
		if strings.Contains(key, q) && len(q) >= 4 {
			d = min(d, 1)
		}
		limit := max(2, len(q)/3)
		if d > limit {
			continue
		}
		n := models[row].Name
		if c, ok := best[n]; !ok || d < c.dist {
			best[n] = cand{n, d, row}
		}
	}
	list := make([]cand, 0, len(best))
	for _, c := range best {
		list = append(list, c)
	}
	slices.SortFunc(list, func(a, b cand) int {
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		return a.row - b.row
	})
	var out []string
	for i := 0; i < len(list) && i < 3; i++ {
		out = append(out, list[i].name)
	}
	return out
}

// MinParams and MaxParams bound what ParseParams accepts: below a million
// parameters a unit was almost surely forgotten ("13" for "13B"); above ten
// trillion no published model exists.
const (
	MinParams = 1e6
	MaxParams = 1e13
)

// ParseParams reads a parameter count: a number with an optional unit K, M, B
// or T (case-insensitive), or plain scientific notation: "13B", "1.5b",
// "350M", "70e9".
func ParseParams(s string) (float64, error) {
	t := strings.ReplaceAll(strings.TrimSpace(s), " ", "")
	if t == "" {
		return 0, errors.New("empty parameter count: want e.g. 13B, 1.5B, 350M or 70e9")
	}
	mult := 1.0
	num := t
	switch t[len(t)-1] {
	case 'k', 'K':
		mult = 1e3
	case 'm', 'M':
		mult = 1e6
	case 'b', 'B':
		mult = 1e9
	case 't', 'T':
		mult = 1e12
	}
	if mult != 1 {
		num = t[:len(t)-1]
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a parameter count: want e.g. 13B, 1.5B, 350M or 70e9", s)
	}
	n := v * mult
	switch {
	case n <= 0:
		return 0, fmt.Errorf("parameter count %s is not positive", strings.TrimSpace(s))
	case n < MinParams:
		return 0, fmt.Errorf("parameter count %s is under a million: add a unit, e.g. %sB", strings.TrimSpace(s), num)
	case n > MaxParams:
		return 0, fmt.Errorf("parameter count %s is over ten trillion", strings.TrimSpace(s))
	}
	return n, nil
}

// FormatParams writes a parameter count the way model names do: "8.03B",
// "350M", "1.2T", to at most three decimals.
func FormatParams(n float64) string {
	unit, div := "", 1.0
	switch {
	case n >= 1e12:
		unit, div = "T", 1e12
	case n >= 1e9:
		unit, div = "B", 1e9
	case n >= 1e6:
		unit, div = "M", 1e6
	case n >= 1e3:
		unit, div = "K", 1e3
	}
	v := math.Round(n/div*1000) / 1000
	return strconv.FormatFloat(v, 'f', -1, 64) + unit
}

// EstimateModel builds a dense model of the given parameter count whose shape
// (layers, hidden size, heads, KV heads, head size, max context) is that of
// the dense known model nearest in size (by ratio of parameter counts; ties go
// to the smaller model). The result is marked Estimated: its KV cache is the
// neighbour's per-token size, right for modern grouped-query models and too
// small for older models that cache every head (e.g. Llama 2 13B).
func EstimateModel(params float64) Model {
	best, bestDist := 0, math.Inf(1)
	for i, m := range models {
		if m.MoE() || m.KVLatentDim > 0 {
			continue
		}
		d := math.Abs(math.Log(params / m.Params))
		if math.IsNaN(d) {
			d = math.Inf(1)
		}
		if d < bestDist || d == bestDist && m.Params < models[best].Params {
			best, bestDist = i, d
		}
	}
	n := clone(models[best])
	return Model{
		Name:   FormatParams(params),
		Params: params, ActiveParams: params,
		Layers: n.Layers, Hidden: n.Hidden, Heads: n.Heads, KVHeads: n.KVHeads, HeadDim: n.HeadDim,
		MaxContext: n.MaxContext,
		Source:     "shape of " + n.Name + " (" + n.Source + ")",
		Estimated:  true, ShapeFrom: n.Name,
	}
}
