"Label smoothing (Szegedy et al., CVPR 2016) as a prism_nb method: a plugin that is one file."
import torch.nn.functional as F
from prism_nb.algorithms import ERM, register_algorithm, uniform


@register_algorithm('LabelSmooth')  # configs say method='labelsmooth'; tables show LabelSmooth
class LabelSmooth(ERM):
    "Cross-entropy against targets smoothed by `smoothing` towards the uniform distribution."
    group, needs_domains = 'dg', False  # not inherited: a DG baseline in tables, no domain labels

    @classmethod
    def defaults(cls):
        return {**super().defaults(), 'smoothing': 0.1}

    @classmethod
    def hparam_space(cls):
        return {**super().hparam_space(), 'smoothing': (0.0, 0.5)}  # what a config may hold

    @classmethod
    def search_space(cls):
        return {**super().search_space(), 'smoothing': uniform(0.0, 0.3)}  # what the protocol draws

    def update(self, batch):
        logits = self.predict(batch.v, batch.m, batch.t)
        loss = F.cross_entropy(logits, batch.y, label_smoothing=self.hparams['smoothing'])
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        return {'loss': loss.detach()}
