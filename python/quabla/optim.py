"""``qb.optim``: optimizers (``SGD``, ``Adam``, ``AdamW``: hyperparameter objects with pure
``init``/``update`` over pytrees, optax's formulas; python/quabla/_optimizers.py), learning-rate
schedules (``qb.optim.schedules``, python/quabla/_schedules.py) and ``Trainer``, which compiles
a loss, its gradient and an optimizer's update into one step program with resident state
(python/quabla/_trainer.py).

    opt = qb.optim.Adam(learning_rate=0.05)
    state = opt.init(params)
    params, state = opt.update(params, grads, state)

    trainer = qb.optim.Trainer(loss, params, opt, *data)
    trainer.fit(300)
"""

from ._optimizers import SGD, Adam, AdamW
from . import _schedules as schedules
from ._trainer import Trainer

__all__ = ["Adam", "AdamW", "SGD", "Trainer", "schedules"]
