"""PNG thumbnails, read back with Pillow (an independent decoder)."""

import base64
import io

import numpy as np
import pytest
from PIL import Image

from nca_core import datasets
from nca_core.plots.thumbnails import png_data_urls


def decoded(url: str) -> Image.Image:
    prefix = "data:image/png;base64,"
    assert url.startswith(prefix)
    return Image.open(io.BytesIO(base64.b64decode(url[len(prefix) :])))


def test_each_image_is_a_png_with_dark_ink_on_white_paper():
    image = np.zeros((3, 4))
    image[1, 2] = 1.0  # one pixel of full ink
    image[2, 0] = 0.5
    (url,) = png_data_urls(image.reshape(1, -1), (3, 4), size=4)
    picture = decoded(url)
    assert picture.format == "PNG" and picture.size == (4, 3)  # width x height, no scaling
    pixels = np.asarray(picture.convert("L"))
    assert pixels[1, 2] == 0 and pixels[0, 0] == 255  # ink black, paper white
    assert abs(int(pixels[2, 0]) - 128) <= 17  # half ink is mid grey (16 levels)


@pytest.mark.parametrize(("shape", "scale"), [((8, 8), 7), ((16, 16), 4), ((28, 28), 2), ((5, 3), 11)])
def test_pixels_become_square_blocks_of_about_the_asked_size(shape, scale, rng):
    images = rng.random((2, shape[0] * shape[1]))
    for url, image in zip(png_data_urls(images, shape, size=56), images):
        picture = np.asarray(decoded(url).convert("L"))
        assert picture.shape == (shape[0] * scale, shape[1] * scale)
        block = picture[::scale, ::scale]
        assert (picture == block.repeat(scale, 0).repeat(scale, 1)).all()
        expected = np.rint((1 - (image - images.min()) / np.ptp(images)) * 15) * 17
        np.testing.assert_array_equal(block, expected.reshape(shape))  # one range for the batch


def test_digit_thumbnails_are_small():
    data = datasets.load("digits")
    urls = png_data_urls(data.X_train[:200], data.image_shape)
    assert len(urls) == 200 and max(map(len, urls)) < 400  # bytes each, sent with every live frame
    assert np.asarray(decoded(urls[0]).convert("L")).shape == (56, 56)
