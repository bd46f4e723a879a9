"""What each dataset is, where its files come from and how their content is pinned."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["REGISTRY", "DatasetSpec", "RemoteFile"]


@dataclass(frozen=True)
class RemoteFile:
    """A file as distributed (compressed), pinned by the SHA-256 of its decompressed content.

    ``label_sha256`` (USPS only) pins the parsed label sequence, which lets a copy whose
    number formatting differs from ours pass when its shape and labels match exactly.
    """

    name: str
    sha256: str
    label_sha256: str | None = None


@dataclass(frozen=True)
class DatasetSpec:
    name: str
    title: str
    description: str
    citation: str
    classes: tuple[str, ...]
    image_shape: tuple[int, int] | None = None
    files: tuple[RemoteFile, ...] = ()
    mirrors: tuple[str, ...] = ()
    sizes: tuple[int, int] | None = None
    label_counts: tuple[tuple[int, ...], tuple[int, ...]] | None = field(default=None, repr=False)


_DIGITS = tuple(str(d) for d in range(10))

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
                "Chemical analysis of 178 wines from three cultivars in one region of Italy: "
                "13 measurements on very different scales. Bundled with scikit-learn; split "
                "70/30, stratified and seeded, as in the paper's experiments."
            ),
            citation=("M. Forina et al. Wine data set, UCI Machine Learning Repository, 1991."),
            classes=("class 0", "class 1", "class 2"),
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
                    "ee5027fd47b76715ac18ca27e72fa1332bde98e0b8ce593b503bb2bdb6c03da0",
                ),
                RemoteFile(
                    "usps.t.bz2",
                    "51b73e708c82aba0174db194af8cef0a4d2154c4afe76df0853dd594c5a7ed87",
                    "0b8b792b8ca1c5c704fd9d5bbd1b261623a359e6c8c65b23db428257beea7800",
                ),
            ),
            mirrors=("https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass",),
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
                ),
                RemoteFile(
                    "train-labels-idx1-ubyte.gz",
                    "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5",
                ),
                RemoteFile(
                    "t10k-images-idx3-ubyte.gz",
                    "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
                ),
                RemoteFile(
                    "t10k-labels-idx1-ubyte.gz",
                    "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2",
                ),
            ),
            mirrors=(
                "https://ossci-datasets.s3.amazonaws.com/mnist",
                "https://storage.googleapis.com/cvdf-datasets/mnist",
            ),
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
                ),
                RemoteFile(
                    "train-labels-idx1-ubyte.gz",
                    "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
                ),
                RemoteFile(
                    "t10k-images-idx3-ubyte.gz",
                    "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
                ),
                RemoteFile(
                    "t10k-labels-idx1-ubyte.gz",
                    "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34",
                ),
            ),
            mirrors=("https://raw.githubusercontent.com/zalandoresearch/fashion-mnist/master/data/fashion",),
            sizes=(60000, 10000),
        ),
    ]
}
