# The loader of the pkgjob bench job, in its own module (as detection and vision reference
# code keep it): num_workers defaults to 0 here, and train.py does not pass it.
import torch
from torch.utils.data import DataLoader


def build_loader(dataset, batch_size, num_workers=0):
    sampler = torch.utils.data.SequentialSampler(dataset)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler,
                      num_workers=num_workers, pin_memory=True)
