"Spectral decoupling (Pezeshki et al., Gradient Starvation, NeurIPS 2021) as a prism_nb method."
import torch.nn.functional as F
from prism_nb.algorithms import ERM, register_algorithm, log10_uniform


@register_algorithm('SpecDecoup')  # configs say method='specdecoup'; tables show SpecDecoup
class SpecDecoup(ERM):
    "Spectral decoupling: cross-entropy plus `sd_reg` x the mean squared logit."
    group, needs_domains = 'dg', False  # not inherited: a DG baseline in tables, no domain labels

    @classmethod
    def defaults(cls):
        return {**super().defaults(), 'sd_reg': 0.1}

    @classmethod
    def hparam_space(cls):
        return {**super().hparam_space(), 'sd_reg': (0., 1.)}  # a value outside is refused up front

    @classmethod
    def search_space(cls):  # every knob of defaults() is searched, or in fixed_knobs() with why
        return {**super().search_space(), 'sd_reg': log10_uniform(-5, -1)}  # DomainBed's SD range

    def update(self, batch):
        logits = self.predict(batch.v, batch.m, batch.t)  # ERM's: classifier(featurizer(v, m, t))
        nll = F.cross_entropy(logits, batch.y)
        penalty = logits.pow(2).mean()  # keeps confidence off the few features learned first
        loss = nll + self.hparams['sd_reg'] * penalty
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        return {'loss': loss.detach(), 'nll': nll.detach(), 'penalty': penalty.detach()}
