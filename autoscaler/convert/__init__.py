"""`promscaler-autoscaler convert`: KEDA ScaledObjects and native HPAs to Autoscalers.

Pure: documents in, a `Conversion` out (the Autoscaler, the adapter rules its queries need, and
a note for every field that could not be carried over). The command line is
`autoscaler/convert_cli.py`.
"""

from autoscaler.convert.hpa import from_hpa
from autoscaler.convert.keda import from_scaled_object
from autoscaler.convert.model import Conversion, ConvertError, NotConverted, Note, convert

__all__ = [
    "Conversion",
    "ConvertError",
    "NotConverted",
    "Note",
    "convert",
    "from_hpa",
    "from_scaled_object",
]
