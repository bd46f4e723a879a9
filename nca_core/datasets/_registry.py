"""What each dataset is, where its files come from and how their content is pinned."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["REGISTRY", "DatasetSpec", "RemoteFile"]


@dataclass(frozen=True)
class RemoteFile:
    """A file as distributed (compressed), pinned twice.

    ``sha256`` pins its decompressed content. ``decoded`` pins every array decoded from it
    (``"X_train"``, ``"y_train"``, ...) by the SHA-256 of the array's bytes in the set's fixed
    dtype, little-endian: ``DatasetSpec.pixel_dtype`` for images, int64 for labels. A USPS
    copy whose number formatting differs from ours passes on its decoded arrays alone.
    """

    name: str
    sha256: str
    decoded: Mapping[str, str] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class DatasetSpec:
    name: str
    title: str
    description: str
    citation: str
    classes: tuple[str, ...]
    image_shape: tuple[int, int] | None = None
    feature_names: tuple[str, ...] | None = None
    files: tuple[RemoteFile, ...] = ()
    mirrors: tuple[str, ...] = ()
    sizes: tuple[int, int] | None = None
    pixel_dtype: str | None = None
    label_counts: tuple[tuple[int, ...], tuple[int, ...]] | None = field(default=None, repr=False)


_DIGITS = tuple(str(d) for d in range(10))

# The UCI attribute names of the wine set, in scikit-learn's column order.
_WINE_FEATURES = (
    "alcohol", "malic acid", "ash", "alcalinity of ash", "magnesium", "total phenols",
    "flavanoids", "nonflavanoid phenols", "proanthocyanins", "color intensity", "hue",
    "OD280/OD315 of diluted wines", "proline",
)  # fmt: skip

_MNIST_CITATION = (
    "Y. LeCun, L. Bottou, Y. Bengio and P. Haffner. Gradient-based learning applied to "
    "document recognition. Proceedings of the IEEE 86(11):2278-2324, 1998."
)

REGISTRY: dict[str, DatasetSpec] = {
    spec.name: spec
    for spec in [
        DatasetSpec(
            name="rings",
            title="Concentric rings (synthetic, 3-D)",
            description=(
                "The synthetic set of the NCA paper: five concentric rings in the first two "
                "dimensions and Gaussian noise with a much larger variance in the third. PCA "
                "keeps the noise, LDA cannot separate non-convex classes, and NCA finds the "
                "rings. Generated on the fly, so it needs no download."
            ),
            citation=(
                "J. Goldberger, S. Roweis, G. Hinton and R. Salakhutdinov. Neighbourhood "
                "Components Analysis. NIPS 17, 2004."
            ),
            classes=tuple(f"ring {i + 1}" for i in range(5)),
        ),
        DatasetSpec(
            name="wine",
            title="UCI wine (13 features, 3 cultivars)",
            description=(
                "Chemical analysis of 178 wines grown in one region of Italy from three "
                "cultivars (Forina et al. studied Barolo, Grignolino and Barbera wines from "
                "Piedmont; the UCI copy numbers the cultivars 1 to 3): 13 measurements on very "
                "different scales, from hue (around 1) to proline (hundreds). Bundled with "
                "scikit-learn; split 70/30, stratified and seeded, as in the paper's experiments."
            ),
            citation=("M. Forina et al. Wine data set, UCI Machine Learning Repository, 1991."),
            classes=("cultivar 1", "cultivar 2", "cultivar 3"),
            feature_names=_WINE_FEATURES,
        ),
        DatasetSpec(
            name="digits",
            title="Handwritten digits 8x8 (scikit-learn)",
            description=(
                "1,797 handwritten digits as 8x8 images with 17 grey levels, from the UCI "
                "optical recognition set. Bundled with scikit-learn; split 70/30, stratified "
                "and seeded."
            ),
            citation=(
                "E. Alpaydin and C. Kaynak. Optical Recognition of Handwritten Digits, UCI "
                "Machine Learning Repository, 1998."
            ),
            classes=_DIGITS,
            image_shape=(8, 8),
        ),
        DatasetSpec(
            name="usps",
            title="USPS handwritten digits 16x16",
            description=(
                "Digits scanned from envelopes by the US Postal Service: 7,291 training and "
                "2,007 test images of 16x16 pixels scaled to [-1, 1], in the standard split."
            ),
            citation=(
                "J. J. Hull. A database for handwritten text recognition research. IEEE "
                "Transactions on Pattern Analysis and Machine Intelligence 16(5):550-554, 1994."
            ),
            classes=_DIGITS,
            image_shape=(16, 16),
            files=(
                RemoteFile(
                    "usps.bz2",
                    "4a8df5b007d276e58d17522e88aa9f420a4d19757eaf8f450182ae181a70cc3b",
                    decoded={
                        "X_train": "a9a8dae6a940eb192480b57c8fb83152c045e880fe7cfe5bfdf8c27d4659be6b",
                        "y_train": "d2205a402e10ef9785bcb548e666f1fdc5d719287eac6d14327f77964ca173c1",
                    },
                ),
                RemoteFile(
                    "usps.t.bz2",
                    "51b73e708c82aba0174db194af8cef0a4d2154c4afe76df0853dd594c5a7ed87",
                    decoded={
                        "X_test": "f5610916d178b1a9214fd48db4b524cbb3066bab2507b5804e9b5aeb35ddd9ea",
                        "y_test": "83d5538087f38b4aa9a64e4c69e47ae24d1b4eaa601c3d41c4a32d7c2739d831",
                    },
                ),
            ),
            mirrors=("https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass",),
            pixel_dtype="<f4",
            sizes=(7291, 2007),
            label_counts=(
                (1194, 1005, 731, 658, 652, 556, 664, 645, 542, 644),
                (359, 264, 198, 166, 200, 160, 170, 147, 166, 177),
            ),
        ),
        DatasetSpec(
            name="mnist",
            title="MNIST handwritten digits 28x28",
            description=(
                "70,000 handwritten digits, size-normalised and centred in 28x28 grey-level "
                "images: the standard 60,000 training and 10,000 test images."
            ),
            citation=_MNIST_CITATION,
            classes=_DIGITS,
            image_shape=(28, 28),
            files=(
                RemoteFile(
                    "train-images-idx3-ubyte.gz",
                    "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db",
                    decoded={
                        "X_train": "741c988805d008ac6e4c904b69001ba184c24b2c540a4ef403f4c71b676cf757",
                    },
                ),
                RemoteFile(
                    "train-labels-idx1-ubyte.gz",
                    "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5",
                    decoded={
                        "y_train": "e474323ac02fc156161b0bbb1f8c9cfeb327a74bcd9f9680a8385269a24f566c",
                    },
                ),
                RemoteFile(
                    "t10k-images-idx3-ubyte.gz",
                    "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
                    decoded={
                        "X_test": "6d87418db22cc8025d05968bec9bd5c3932904b23485740db143a061a2c9d161",
                    },
                ),
                RemoteFile(
                    "t10k-labels-idx1-ubyte.gz",
                    "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2",
                    decoded={
                        "y_test": "2fd8de6bdb8d11780b4b96dc57847bcfe6953f7c32aa48bfcd8237c3b7847243",
                    },
                ),
            ),
            mirrors=(
                "https://ossci-datasets.s3.amazonaws.com/mnist",
                "https://storage.googleapis.com/cvdf-datasets/mnist",
            ),
            pixel_dtype="|u1",
            sizes=(60000, 10000),
        ),
        DatasetSpec(
            name="fashion-mnist",
            title="Fashion-MNIST clothing 28x28",
            description=(
                "Zalando's article images in ten clothing classes, a drop-in replacement for "
                "MNIST that is harder to classify: 60,000 training and 10,000 test images."
            ),
            citation=(
                "H. Xiao, K. Rasul and R. Vollgraf. Fashion-MNIST: a novel image dataset for "
                "benchmarking machine learning algorithms. arXiv:1708.07747, 2017."
            ),
            classes=(
                "T-shirt/top",
                "Trouser",
                "Pullover",
                "Dress",
                "Coat",
                "Sandal",
                "Shirt",
                "Sneaker",
                "Bag",
                "Ankle boot",
            ),
            image_shape=(28, 28),
            files=(
                RemoteFile(
                    "train-images-idx3-ubyte.gz",
                    "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
                    decoded={
                        "X_train": "2e487a6c89124f78f2d7521542223cafe96f7123c3ca13d447772ac6ecbb3012",
                    },
                ),
                RemoteFile(
                    "train-labels-idx1-ubyte.gz",
                    "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
                    decoded={
                        "y_train": "e3245b63f7c40d1c8b652835f19744d970c1613b40ddac6bcfc87b9c46e16a0b",
                    },
                ),
                RemoteFile(
                    "t10k-images-idx3-ubyte.gz",
                    "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
                    decoded={
                        "X_test": "c867c93ff95360594e8ec3287995350b824dd110b11595c0e13d5423f621867a",
                    },
                ),
                RemoteFile(
                    "t10k-labels-idx1-ubyte.gz",
                    "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34",
                    decoded={
                        "y_test": "d51d859896c55775b9e9e219b77ff03bcec1b6ac322f313544dc3f9e7bc94fae",
                    },
                ),
            ),
            mirrors=("https://raw.githubusercontent.com/zalandoresearch/fashion-mnist/master/data/fashion",),
            pixel_dtype="|u1",
            sizes=(60000, 10000),
        ),
    ]
}
